"""Reports rendered from stored results: Markdown, HTML with plots, compare, CLI.

The fixtures under tests/data/results/ are real `pgopt lab run smoke --quick`
results; `enriched` adds the optional parts (waits, why, phases, facts, the
article's figures) and hostile text, as later labs and observability write them.
Tests edit the JSON documents, then read them as every command does (`decode`),
so each case is also a valid result.json.
"""

from __future__ import annotations

import copy
import json
import math
import re
import shutil
import statistics
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pgopt.cli import main
from pgopt.errors import UsageError
from pgopt.markup import md_code as code
from pgopt.markup import md_text as text
from pgopt.model.codec import decode
from pgopt.model.verdict import Verdict
from pgopt.report import fields
from pgopt.report.compare import compare_results, comparison_notes
from pgopt.report.html import render_html
from pgopt.report.markdown import render_markdown
from pgopt.report.plots import all_plots
from pgopt.report.terminal import print_summary
from pgopt.report.write import write_reports

RESULTS = Path(__file__).parent.parent / "data" / "results"
HOSTILE = "<script>alert('x')</script> & $x$ | `tick`"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / name / "result.json").read_text())
    return data


@pytest.fixture
def smoke() -> dict[str, Any]:
    return load("smoke-a")


@pytest.fixture
def enriched(smoke: dict[str, Any]) -> dict[str, Any]:
    r = copy.deepcopy(smoke)
    r["seed"] = "000_b2edd533ea3c4db8.txt"
    waits = [
        {"CPU": 0.52, "IO:WalSync": 0.31, "LWLock:WALWrite": 0.08, "Client:ClientRead": 0.09},
        {"CPU": 0.81, "LWLock:WALWrite": 0.04, "Client:ClientRead": 0.12, "IO:WalSync": 0.03},
        {"CPU": 0.93, "Client:ClientRead": 0.07},
    ]
    for step, shares, value in zip(r["steps"], waits, (312.5, 830.0, 5200.0), strict=True):
        step["waits"] = shares
        step["reported"] = {
            "value": value,
            "unit": "tx/s",
            "note": "64 cores, PostgreSQL 10",
            "ratio_vs_baseline": value / 312.5,
        }
    r["steps"][1]["why"] = "IO:WalSync 31% -> 3%; WAL bytes/tx 1.2k -> 1.2k"
    r["steps"][1]["phases"] = [
        {"name": "restore", "seconds": 12.3, "ci95": [11.9, 12.8], "samples": [12.3]},
        {"name": "index", "seconds": 4.1, "ci95": [4.0, 4.3], "samples": [4.1]},
    ]
    r["steps"][1]["facts"] = {"table size": "13 MB"}
    r["steps"][2]["title"] = HOSTILE
    r["steps"][2]["name"] = "sel<b>only</b>"
    r["steps"][2]["checks"][0] = {"name": HOSTILE, "passed": False, "detail": "got 1 | want 2"}
    r["passed"] = False
    return r


# -- Markdown -----------------------------------------------------------------


def test_markdown_has_summary_steps_environment_and_command(smoke: dict[str, Any]) -> None:
    md = render_markdown(decode(smoke))
    assert md.startswith("# smoke: Smoke: pgbench's own scripts at a tiny scale\n")
    # no step has the article's figure: no article column
    assert "| step | what changed | tx/s | × baseline | verdict | checks |" in md
    assert "| **async_commit** | `synchronous_commit=off` | 1,458 ±6% | ×1.91 [1.60–2.32]" in md
    for i, step in enumerate(smoke["steps"], 1):
        assert f"### {i}. {step['name']}: " in md
    assert "- **Latency (ms):** avg 2.66 · p50 1.91 · p95 5.7 · p99 9.22" in md
    assert "- **Checks:** ✔ every account still exists · ✔ no transaction failed" in md
    assert "- **Warning:** ⚠ runs vary by 20%" in md
    assert "embedded PostgreSQL 18.6" in md
    assert "| `shared_buffers` | `128MB` |" in md
    assert "```sh\npgopt lab run smoke --quick --out /tmp/smoke-run\n```" in md


def test_markdown_skips_absent_optional_parts(smoke: dict[str, Any]) -> None:
    md = render_markdown(decode(smoke))
    for absent in ("Bottleneck", "Waits", "| phase |", "| fact |", "article's figures"):
        assert absent not in md


def test_markdown_renders_optional_parts_when_present(enriched: dict[str, Any]) -> None:
    md = render_markdown(decode(enriched))
    assert "- **Bottleneck:** **IO:WalSync 31% -&gt; 3%; WAL bytes/tx 1.2k -&gt; 1.2k**" in md
    assert "- **Waits:** CPU 52% · IO:WalSync 31% · Client:ClientRead 9% · LWLock:WALWrite 8%" in md
    assert "| restore | 12.300 | 11.900–12.800 |" in md
    assert "| table size | `13 MB` |" in md
    assert "## The article's figures beside ours" in md
    assert "| step | what changed | tx/s | × baseline | verdict | article | checks |" in md
    assert "| async_commit | 830 tx/s | ×2.66 | ×1.91 [1.60–2.32] | 64 cores, PostgreSQL 10 |" in md
    assert "> ❌ **A check failed**" in md


def test_phase_table_marks_phases_that_got_slower_or_faster(enriched: dict[str, Any]) -> None:
    enriched["steps"][2]["phases"] = [
        {"name": "restore", "seconds": 30.0, "verdict_vs_previous": "slower"},
        {"name": "index", "seconds": 2.0, "verdict_vs_previous": "faster"},
        {"name": HOSTILE, "seconds": 1.0, "verdict_vs_previous": "no-change"},
    ]
    names, rows = fields.phase_table(decode(enriched))
    assert names == ["restore", "index", HOSTILE]
    assert [r.step for r in rows] == ["async_commit", "sel<b>only</b>"]
    assert [fields.phase_cell(c) for c in rows[0].cells] == ["12.3", "4.10", "—"]
    assert [fields.phase_cell(c) for c in rows[1].cells] == ["30.0 ▲", "2.00 ▼", "1.00"]
    assert rows[0].article is None  # the article gave no phase figures for it
    enriched["steps"][2]["reported"]["phases"] = {"restore": 93, "index": 29.5}
    (_, rows) = fields.phase_table(decode(enriched))
    assert fields.article_cells(rows[1]) == ["93", "29.5", "—", "5200"]
    md = render_markdown(decode(enriched))
    assert "### Seconds per phase" in md
    ours = "| **sel&lt;b&gt;only&lt;/b&gt;** | **30.0 ▲** | **2.00 ▼** | 1.00 | 12.4k |"
    assert f"{ours}\n| *article* | *93* | *29.5* | *—* | *5200* |" in md
    page = render_html(decode(enriched))
    assert "<h3>Seconds per phase</h3>" in page
    assert '<span class="bad">30.0 ▲</span>' in page
    assert '<td><span class="muted">article</span></td>' in page
    assert '<td class="num"><span class="muted">29.5</span></td>' in page
    assert "<script" not in page
    assert fields.phase_table(decode(load("smoke-a"))) == ([], [])


def test_phase_waits_table_says_where_each_phase_spent_its_time(
    enriched: dict[str, Any],
) -> None:
    phases = enriched["steps"][1]["phases"]
    phases[0].update(
        waits={"CPU": 0.7, "LWLock:WALWrite": 0.2, HOSTILE: 0.1},
        wal_bytes=1.5 * 2**30,
        why="LWLock:WALWrite 24% -> 3%",
    )
    phases[1].update(waits={HOSTILE: 0.9, "CPU": 0.1}, wal_bytes=0, why=HOSTILE)
    names, rows = fields.phase_waits_table(decode(enriched))
    assert names == ["restore", "index"]
    assert [r.step for r in rows] == ["async_commit"]
    assert rows[0].cells == [
        ["CPU 70%", "LWLock:WALWrite 20%", "WAL 1.5 GiB"],
        [f"{HOSTILE} 90%", "CPU 10%", "WAL 0 B"],
    ]
    md = render_markdown(decode(enriched))
    assert "### Where each phase spent its time" in md
    assert "| **async_commit** | CPU 70% · LWLock:WALWrite 20% · WAL 1.5 GiB |" in md
    assert "| restore | 12.300 | 11.900–12.800 | LWLock:WALWrite 24% -&gt; 3% |" in md
    page = render_html(decode(enriched))
    assert "<h3>Where each phase spent its time</h3>" in page
    assert "<td>CPU 70%<br>LWLock:WALWrite 20%<br>WAL 1.5 GiB</td>" in page
    assert "<script" not in page and "<script" not in md
    console = Console(record=True, width=200)
    print_summary(console, decode(enriched))
    shown = console.export_text()
    assert "Per phase, the wait events" in shown
    assert "WAL 1.5 GiB" in shown and f"{HOSTILE} 90%" in shown
    # results from before phases were observed render without the table
    assert fields.phase_waits_table(decode(load("smoke-a"))) == ([], [])
    for phase in phases:
        del phase["wal_bytes"]
    assert fields.phase_waits_table(decode(enriched)) == ([], [])


def test_markdown_escapes_lab_text(enriched: dict[str, Any]) -> None:
    md = render_markdown(decode(enriched))
    assert "<script>" not in md and "<b>" not in md
    assert "&lt;script&gt;alert('x')&lt;/script&gt; &amp; $x$ \\| \\`tick\\`" in md
    # a cell with a pipe does not split the table row
    row = next(line for line in md.splitlines() if line.startswith("| **sel"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 8


def test_markdown_helpers() -> None:
    assert text("a\n b|c") == "a b\\|c"
    assert code("x`y") == "``x`y``"
    assert code("a|b", in_table=True) == "`a\\|b`"


def test_partial_result_says_so(smoke: dict[str, Any]) -> None:
    smoke["complete"] = False
    smoke["error"] = "interrupted (SIGTERM)"
    assert "> **Incomplete run** (interrupted (SIGTERM))" in render_markdown(decode(smoke))
    assert "<strong>Incomplete run</strong> (interrupted (SIGTERM))" in render_html(decode(smoke))


def test_stopped_run_says_how_many_of_its_planned_rounds_ran() -> None:
    data = load("smoke-c")
    planned = data["params"]["reps"]
    data["plan"]["segments"][0]["rounds"] = planned - 1
    data["plan"]["segments"][0]["stopped"] = "interrupted (SIGTERM)"
    report = render_markdown(decode(data))
    assert f"({planned} rounds planned, {planned - 1} ran)" in report
    assert f"{planned - 1} of {planned} (interrupted (SIGTERM))" in report
    assert f"({planned} rounds)" in render_markdown(decode(load("smoke-c")))


# -- HTML ---------------------------------------------------------------------


class _Tags(HTMLParser):
    """Counts start tags and collects attributes that could fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.count: dict[str, int] = {}
        self.fetching: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.count[tag] = self.count.get(tag, 0) + 1
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith(("data:", "#")):
                self.fetching.append(f"{tag} {name}={value}")


def tags(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


def six_seconds(result: dict[str, Any]) -> dict[str, Any]:
    """Runs of six seconds each, the rate read per second: a course worth a plot."""
    for step in result["steps"]:
        for run in step["runs"]:
            run["progress"] = [[t, run["tps"] * (0.95 + 0.02 * t)] for t in range(1, 7)]
    return result


def test_html_is_self_contained_with_plots(smoke: dict[str, Any]) -> None:
    page = render_html(decode(six_seconds(smoke)))
    found = tags(page)
    assert found.fetching == []
    assert "script" not in found.count and "link" not in found.count
    assert "Content-Security-Policy" in page
    assert found.count["svg"] == 3  # medians, throughput, latency: no waits, no phases
    assert found.count["figure"] == 3
    assert not re.search(r"https?://(?!www\.w3\.org/)", page)


def test_throughput_over_time_needs_a_series_and_is_in_the_steps_unit(
    smoke: dict[str, Any],
) -> None:
    assert "throughput" not in [p.key for p in all_plots(decode(smoke))]  # 2-3 s a run
    smoke["metric"]["unit"] = "logins/s"
    for step in smoke["steps"]:
        step["metric"]["unit"] = "logins/s"
        for run in step["runs"]:
            run["value"] = 10 * run["tps"]  # ten logins a transaction
    plot = next(p for p in all_plots(decode(six_seconds(smoke))) if p.key == "throughput")
    assert "logins/s" in plot.svg and "pgbench tx/s" not in plot.svg


def test_html_draws_waits_and_phases_when_present(enriched: dict[str, Any]) -> None:
    enriched = six_seconds(enriched)
    found = tags(render_html(decode(enriched)))
    assert found.count["svg"] == 5
    assert [p.key for p in all_plots(decode(enriched))] == [
        "medians",
        "throughput",
        "latency",
        "waits",
        "phases",
    ]


def test_each_monitored_series_gets_a_plot_over_time(smoke: dict[str, Any]) -> None:
    """The replicas lab's lag, read every second: one figure per series, a line per
    step that has it, with the series' hostile name kept as text."""
    r = copy.deepcopy(smoke)
    for step in r["steps"][1:]:
        for run in step["runs"]:
            run["monitor"] = {
                "lag_bytes": [[0.0, 0.0], [1.0, 456.0], [2.0, 120.0]],
                HOSTILE: [[0.0, 1.0], [1.0, 2.0]],
            }
    plots = all_plots(decode(r))
    keys = [p.key for p in plots]
    assert keys[-2:] == ["monitor-_script_alert__x____script_____x_____tick_", "monitor-lag_bytes"]
    lag = plots[-1]
    assert lag.title == "Monitored every second: lag_bytes"
    assert lag.svg.count("<path") > 0 and "lag_bytes" in lag.svg
    assert "<script>" not in plots[-2].svg  # matplotlib escaped the name


def test_html_escapes_everything_from_labs_and_the_database(enriched: dict[str, Any]) -> None:
    page = render_html(decode(enriched))
    assert "<script" not in page
    assert "<b>only" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp;" in page
    assert "script" not in tags(page).count


def test_plots_are_deterministic(smoke: dict[str, Any]) -> None:
    assert render_html(decode(smoke)) == render_html(decode(smoke))


def test_plot_ids_do_not_collide_between_figures(enriched: dict[str, Any]) -> None:
    page = render_html(decode(enriched))
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) > 100 and len(ids) == len(set(ids))
    for ref in re.findall(r'(?:url\(#|href="#)([^)"]+)', page):
        assert ref in ids


def test_result_without_optional_fields_still_renders(smoke: dict[str, Any]) -> None:
    for step in smoke["steps"]:
        for key in ("latency_ms", "warnings", "facts", "reported"):
            step.pop(key, None)
        for run in step["runs"]:
            run.pop("progress")
    smoke["target"].pop("non_default_settings")
    page = render_html(decode(smoke))
    assert tags(page).count["svg"] == 1
    assert "Non-default server settings" not in page
    assert "Latency" not in render_markdown(decode(smoke))


# -- fields and compare -------------------------------------------------------


def test_headline_follows_the_metric_direction(smoke: dict[str, Any]) -> None:
    best = fields.headline(decode(smoke))
    assert best is not None and best.name == "select_only"
    smoke["metric"]["higher_is_better"] = False
    best = fields.headline(decode(smoke))
    assert best is not None and best.name == "async_commit"


def test_compare_two_runs_of_a_lab() -> None:
    a, b = load("smoke-a"), load("smoke-b")
    comparison = compare_results(decode(a), decode(b))
    assert [s.name for s in comparison.steps] == ["baseline", "async_commit", "select_only"]
    for step, sa, sb in zip(comparison.steps, a["steps"], b["steps"], strict=True):
        assert step.a_median == pytest.approx(sa["metric"]["median"])
        assert step.b_median == pytest.approx(sb["metric"]["median"])
        assert step.decision is not None
        evidence = step.decision.evidence
        assert not evidence.paired  # two lab runs share no rounds
        geo_a = math.exp(statistics.fmean(math.log(v) for v in sa["metric"]["samples"]))
        geo_b = math.exp(statistics.fmean(math.log(v) for v in sb["metric"]["samples"]))
        assert evidence.ratio == pytest.approx(geo_b / geo_a)
        assert evidence.ci95[0] <= evidence.ratio <= evidence.ci95[1]
        # these stored runs have two runs a side: an estimate, never a verdict
        assert step.verdict == "inconclusive"
    assert comparison.differences == ()


def test_compare_lists_steps_in_one_run_only_and_differences() -> None:
    a, b = load("smoke-a"), load("smoke-b")
    b["steps"] = b["steps"][:2]
    b["params"]["scale"] = 2.0
    comparison = compare_results(decode(a), decode(b))
    assert [s.name for s in comparison.steps] == ["baseline", "async_commit"]
    assert comparison_notes(comparison) == [
        "only in A: select_only",
        "the runs differ in: scale 1.0 vs 2.0",
    ]


def test_compare_refuses_different_labs() -> None:
    b = load("smoke-b")
    b["lab"] = "login"
    with pytest.raises(UsageError, match="different labs: smoke and login"):
        compare_results(decode(load("smoke-a")), decode(b))


# -- commands -----------------------------------------------------------------


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    for name in ("smoke-a", "smoke-b"):
        shutil.copytree(RESULTS / name, tmp_path / name)
    return tmp_path


def test_report_command_writes_both_and_prints_the_summary(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(runs / "smoke-a")]) == 0
    out = capsys.readouterr().out
    assert "async_commit" in out and "report.html" in out
    assert (runs / "smoke-a" / "report.md").read_text() == render_markdown(decode(load("smoke-a")))
    assert (runs / "smoke-a" / "report.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(("flag", "written"), [("--md", "report.md"), ("--html", "report.html")])
def test_report_command_writes_only_what_is_asked(runs: Path, flag: str, written: str) -> None:
    assert main(["report", str(runs / "smoke-b" / "result.json"), flag]) == 0
    assert sorted(p.name for p in (runs / "smoke-b").glob("report.*")) == [written]


def test_write_reports_returns_paths(runs: Path) -> None:
    paths = write_reports(runs / "smoke-a", decode(load("smoke-a")), html=False)
    assert paths == [runs / "smoke-a" / "report.md"]


def test_runs_command_lists_runs_with_headline(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "--dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert out.count("smoke") >= 2
    assert "select_only ×16.26 [14.12–19.11] faster" in out
    assert "2026-11-22 02:15:28" in out


def test_runs_shows_an_undecided_headline_with_its_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An inconclusive step is the headline only with its verdict beside its ratio."""
    smoke = load("smoke-a")
    for step in smoke["steps"][1:]:
        step["verdict_vs_baseline"] = step["verdict_vs_previous"] = "inconclusive"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "result.json").write_text(json.dumps(smoke))
    assert main(["runs", "--dir", str(tmp_path)]) == 0
    cells = " ".join(re.findall(r"│([^│\n]*)", capsys.readouterr().out)[3::7])  # headlines
    assert " ".join(cells.split()) == "select_only ×16.26 [14.12–19.11] inconclusive"


def test_compare_command(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs / "smoke-a"), str(runs / "smoke-b")]) == 0
    out = capsys.readouterr().out
    assert "B / A" in out and "×2.11 [0.52–8.49]" in out
    assert "inconclusive (needs 3 rounds)" in out


def test_compare_command_different_labs_is_one_line_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = json.loads((runs / "smoke-b" / "result.json").read_text())
    other["lab"] = "login"
    (runs / "smoke-b" / "result.json").write_text(json.dumps(other))
    assert main(["compare", str(runs / "smoke-a"), str(runs / "smoke-b")]) == 2
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert lines == ["pgopt: error: cannot compare runs of different labs: smoke and login"]


def test_sweeps_and_skipped_steps_are_listed(smoke: dict[str, Any]) -> None:
    smoke["sweeps"] = [
        {
            "name": "clients",
            "points": [{"clients": 1, "median": 900.0}, {"clients": 4, "median": 2400.0}],
            "best_clients": 4,
            "knee_clients": 4,
        }
    ]
    smoke["skipped"] = [{"name": "huge_pages", "reason": "needs a restart"}]
    line = "clients (tx/s by clients) 1: 900, 4: 2,400; best at 4 clients, knee at 4"
    md, page = render_markdown(decode(smoke)), render_html(decode(smoke))
    assert f"- {line}" in md and f"<li>{line}</li>" in page
    assert "- huge_pages: needs a restart" in md and "<li>huge_pages: needs a restart</li>" in page


def test_verdict_names_the_step_it_compares_with_and_carries_its_ratio(
    smoke: dict[str, Any],
) -> None:
    from pgopt.report.blocks import Span
    from pgopt.report.document import judged

    steps = decode(smoke).steps
    assert judged(steps[0]) == (Span("—"),)  # the baseline is compared with nothing
    step = replace(steps[2], compared_with="async_commit", verdict_vs_previous=Verdict.SLOWER)
    words = "".join(span.text for span in judged(step))
    assert step.ratio_vs_previous is not None
    low, high = step.ratio_vs_previous.ci95
    assert words == (
        f"slower ×{step.ratio_vs_previous.median:.2f} [{low:.2f}–{high:.2f}] vs async_commit"
    )
