"""The CI gate of `pgopt compare`: the rule on hand-built steps, its JUnit XML and
Markdown summary, and the command's exit codes and files on copies of the stored
smoke runs (tests/data/results/)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pgopt.cli import main
from pgopt.gate.decision import (
    Gate,
    GateItem,
    evaluate,
    junit_xml,
    step_summary_markdown,
)
from pgopt.model.result import Ratio
from pgopt.model.verdict import Verdict

RESULTS = Path(__file__).parent.parent / "data" / "results"
HOSTILE = "<script>alert('x')</script> & \"q\" | `tick`"
NOISE = (1.0, 1.012, 0.991, 1.004, 0.987, 1.008)


def item(
    verdict: Verdict,
    ratio: float | None = 1.0,
    *,
    higher_is_better: bool = True,
    name: str = "step",
) -> GateItem:
    interval = Ratio(ratio, (ratio * 0.97, ratio * 1.03)) if ratio is not None else None
    return GateItem(name, interval, verdict, higher_is_better)


def fails(gate: Gate, step: GateItem) -> bool:
    return evaluate(gate, [step]).failed


@pytest.fixture(autouse=True)
def no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests that run inside GitHub Actions must not write to the job's own summary."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


# -- the rule -----------------------------------------------------------------


def test_a_line_says_how_many_rounds_the_decision_took() -> None:
    same = GateItem(
        "B (B)", Ratio(1.004, (0.99, 1.02), (0.992, 1.016), rounds=4), Verdict.NO_CHANGE, True
    )
    result = evaluate(Gate(0.05), [same])
    assert result.lines() == ["B (B): no-change ×1.00 [0.99–1.02] in 4 rounds: pass"]


def test_slower_beyond_the_threshold_fails() -> None:
    result = evaluate(Gate(0.05), [item(Verdict.SLOWER, 0.91, name="select_only")])
    assert result.failed
    assert result.lines() == ["select_only: slower ×0.91 [0.88–0.94], 9.0% slower ≥ 5%: FAIL"]
    assert result.message() == "the CI gate failed for 1 of 1 step: select_only"


def test_slower_below_the_threshold_passes() -> None:
    result = evaluate(Gate(0.05), [item(Verdict.SLOWER, 0.97)])
    assert not result.failed
    assert result.lines() == ["step: slower ×0.97 [0.94–1.00], 3.0% slower < 5%: pass"]


def test_a_slowdown_equal_to_the_threshold_fails() -> None:
    assert fails(Gate(0.1), item(Verdict.SLOWER, 0.9))  # 1 - 0.9 is a hair below 0.1


@pytest.mark.parametrize(("verdict", "ratio"), [(Verdict.FASTER, 1.5), (Verdict.NO_CHANGE, 0.99)])
def test_faster_and_no_change_never_fail(verdict: Verdict, ratio: float) -> None:
    assert not fails(Gate(0.001, require_decision=True), item(verdict, ratio))


@pytest.mark.parametrize(
    ("verdict", "ratio"), [(Verdict.INCONCLUSIVE, 0.5), (Verdict.NOT_APPLICABLE, None)]
)
def test_undecided_steps_fail_only_when_a_decision_is_required(
    verdict: Verdict, ratio: float | None
) -> None:
    assert not fails(Gate(0.05), item(verdict, ratio))
    assert fails(Gate(None, require_decision=True), item(verdict, ratio))
    line = evaluate(Gate(0.05, require_decision=True), [item(verdict, ratio)]).lines()[0]
    assert line.endswith(", no decision, and one is required: FAIL")


def test_slower_passes_when_only_a_decision_is_required() -> None:
    result = evaluate(Gate(None, require_decision=True), [item(Verdict.SLOWER, 0.5)])
    assert not result.failed
    assert result.lines()[0].endswith(", no regression threshold: pass")


def test_slowdown_follows_the_metric_direction() -> None:
    seconds = item(Verdict.SLOWER, 1.10, higher_is_better=False)
    assert seconds.slowdown == pytest.approx(0.10)
    assert fails(Gate(0.05), seconds)
    assert not fails(Gate(0.15), seconds)
    assert "10.0% slower ≥ 5%" in evaluate(Gate(0.05), [seconds]).lines()[0]
    assert item(Verdict.SLOWER, 0.8).slowdown == pytest.approx(0.2)


def test_gate_off_passes_everything() -> None:
    gate = Gate()
    assert not gate.on
    steps = [item(v, 0.5) for v in Verdict]
    result = evaluate(gate, steps)
    assert not result.failed and len(result.steps) == len(steps)


# -- JUnit XML and the step summary ------------------------------------------


def test_junit_has_one_testcase_per_step_and_a_failure_where_it_failed() -> None:
    result = evaluate(
        Gate(0.05, require_decision=True),
        [
            item(Verdict.SLOWER, 0.5, name="slow"),
            item(Verdict.FASTER, 2.0, name="fast"),
            item(Verdict.INCONCLUSIVE, 1.1, name="unsure"),
        ],
    )
    suite = ET.fromstring(junit_xml(result, "pgopt.smoke"))
    assert suite.tag == "testsuite"
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == (
        "pgopt.smoke",
        "3",
        "2",
    )
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["slow", "fast", "unsure"]
    assert [c.find("failure") is not None for c in cases] == [True, False, True]
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.get("message") == "50.0% slower ≥ 5%"
    assert failure.text == result.lines()[0]
    assert suite.find(".//skipped") is None


def test_junit_escapes_a_hostile_step_name() -> None:
    result = evaluate(Gate(0.05), [item(Verdict.SLOWER, 0.5, name=HOSTILE)])
    xml = junit_xml(result, f"suite {HOSTILE}")
    assert "<script>" not in xml
    suite = ET.fromstring(xml)
    case = suite.find("testcase")
    assert case is not None and case.get("name") == HOSTILE
    assert suite.get("name") == f"suite {HOSTILE}"
    failure = case.find("failure")
    assert failure is not None and failure.text is not None and HOSTILE in failure.text


def test_junit_replaces_characters_xml_cannot_hold() -> None:
    result = evaluate(Gate(0.05), [item(Verdict.SLOWER, 0.5, name="a\x00b\x1bc")])
    case = ET.fromstring(junit_xml(result, "s")).find("testcase")
    assert case is not None and case.get("name") == "a\ufffdb\ufffdc"


def test_step_summary_is_a_table_with_pipes_and_html_escaped() -> None:
    result = evaluate(
        Gate(0.05),
        [item(Verdict.SLOWER, 0.5, name=HOSTILE), item(Verdict.FASTER, 2.0, name="fast")],
    )
    md = step_summary_markdown(result, "compare <b>|</b>")
    assert "<script>" not in md and "<b>" not in md
    assert md.startswith("### compare &lt;b&gt;\\|&lt;/b&gt;: ❌ failed\n")
    assert "CI gate: fails a step slower by ≥ 5%." in md
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert rows[0] == "| step | B / A | verdict | gate |"
    assert rows[2] == (
        "| &lt;script&gt;alert('x')&lt;/script&gt; &amp; \"q\" \\| \\`tick\\` "
        "| ×0.50 [0.48–0.52] | slower | ❌ FAIL: 50.0% slower ≥ 5% |"
    )
    assert rows[3] == "| fast | ×2.00 [1.94–2.06] | faster | pass |"


# -- the command --------------------------------------------------------------


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    for name in ("smoke-a", "smoke-b"):
        shutil.copytree(RESULTS / name, tmp_path / name)
    return tmp_path


def set_samples(run: Path, step_name: str, samples: list[float]) -> None:
    path = run / "result.json"
    result = json.loads(path.read_text())
    metric = next(s for s in result["steps"] if s["name"] == step_name)["metric"]
    metric.update(samples=samples, median=sorted(samples)[len(samples) // 2])
    path.write_text(json.dumps(result))


@pytest.fixture
def slower(runs: Path) -> Path:
    """select_only at half A's throughput in B, six runs a side: a `slower` verdict."""
    set_samples(runs / "smoke-a", "select_only", [12400 * f for f in NOISE])
    set_samples(runs / "smoke-b", "select_only", [6200 * f for f in reversed(NOISE)])
    return runs


def compare(runs: Path, *options: str) -> int:
    return main(["compare", str(runs / "smoke-a"), str(runs / "smoke-b"), *options])


def error_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_regression_beyond_the_threshold_exits_1(
    slower: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert compare(slower, "--fail-on-regression", "5") == 1
    captured = capsys.readouterr()
    assert "CI gate: fails a step slower by ≥ 5%" in captured.out
    assert "select_only: slower ×0.50 [" in captured.out
    assert "50.0% slower ≥ 5%: FAIL" in captured.out
    assert "baseline: inconclusive (needs 3 rounds)" in captured.out
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert lines == ["pgopt: error: the CI gate failed for 1 of 3 steps: select_only"]


def test_a_regression_below_the_threshold_exits_0(
    slower: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert compare(slower, "--fail-on-regression", "60") == 0
    assert "50.0% slower < 60%: pass" in capsys.readouterr().out


def test_require_decision_fails_the_inconclusive_stored_pair(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert compare(runs, "--require-decision") == 1
    assert error_lines(capsys) == [
        "pgopt: error: the CI gate failed for 3 of 3 steps: baseline, async_commit, select_only"
    ]


def test_without_a_gate_the_exit_code_and_files_are_unchanged(
    runs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = runs / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert compare(runs) == 0
    assert "CI gate" not in capsys.readouterr().out
    assert not summary.exists()


def test_junit_file_is_written(slower: Path) -> None:
    junit = slower / "gate.xml"
    assert compare(slower, "--fail-on-regression", "5", "--junit", str(junit)) == 1
    suite = ET.fromstring(junit.read_text())
    assert suite.get("name") == "pgopt.smoke" and suite.get("failures") == "1"
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["select_only"]


def test_step_summary_is_appended_and_created_when_missing(
    slower: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = slower / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert compare(slower, "--fail-on-regression", "60") == 0
    first = summary.read_text()
    assert "### pgopt compare smoke: B = " in first and ": ✅ passed" in first
    assert compare(slower, "--fail-on-regression", "5") == 1
    both = summary.read_text()
    assert both.startswith(first) and both.count("| step | B / A | verdict | gate |") == 2
    assert "| select_only | ×0.50 [" in both and "❌ FAIL: 50.0% slower ≥ 5% |" in both


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", "0.0 is not in the range 0<x<100"),
        ("150", "150.0 is not in the range 0<x<100"),
        ("abc", "'abc' is not a valid float"),
        ("nan", "nan is not a percentage"),
    ],
)
def test_bad_thresholds_are_one_line_exit_2(
    runs: Path, value: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert compare(runs, "--fail-on-regression", value) == 2
    lines = error_lines(capsys)
    assert len(lines) == 1 and lines[0].startswith("pgopt: error: ")
    assert expected in lines[0]


def test_junit_without_a_gate_is_one_line_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert compare(runs, "--junit", str(runs / "gate.xml")) == 2
    assert error_lines(capsys) == [
        "pgopt: error: --junit goes with --fail-on-regression or --require-decision"
    ]


def test_unwritable_junit_file_is_one_line_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = runs / "no-such-folder" / "gate.xml"
    assert compare(runs, "--fail-on-regression", "5", "--junit", str(junit)) == 2
    lines = error_lines(capsys)
    assert len(lines) == 1 and lines[0].startswith(f"pgopt: error: cannot write --junit {junit}")
