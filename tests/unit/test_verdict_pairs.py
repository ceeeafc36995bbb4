"""Every ratio printed beside a verdict is the ratio that verdict judged.

A summary row once showed the interval against the baseline next to a verdict
against another step ('×1.34 [0.81–2.21] faster' where the faster pair was
another). This reads every stored result under tests/data/results/ as the
terminal, report.md and report.html render it, finds each verdict word that
stands next to a ratio, and checks that the (ratio, verdict) pair is one the
result holds: a step against the step it derives from, against its baseline,
or a phase against the same phase.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from rich.console import Console

from pgopt.model.result import LabResult, Ratio
from pgopt.report.fmt import format_ratio
from pgopt.report.html import render_html
from pgopt.report.markdown import render_markdown
from pgopt.report.terminal import print_summary
from pgopt.store import load_result

RESULTS = Path(__file__).parent.parent / "data" / "results"
RATIO = r"×\d+\.\d\d \[\d+\.\d\d–\d+\.\d\d\]"
VERDICT = r"faster|slower|no-change|inconclusive"
# a verdict, then (past a parenthesis such as "(could detect ≥7%)") the ratio beside it
VERDICT_THEN_RATIO = re.compile(rf"({VERDICT})(?: \([^)]*\))?[ *]*({RATIO})")
RATIO_THEN_VERDICT = re.compile(rf"({RATIO})[ *]*({VERDICT})")
INLINE_TAGS = re.compile(r"</?(?:span|strong|em|code|b|i|small|a)\b[^>]*>")


def judged_pairs(result: LabResult) -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()

    def add(ratio: Ratio | None, verdict: object) -> None:
        if ratio is not None and verdict is not None:
            pairs.add((format_ratio(ratio), str(verdict)))

    for step in result.steps:
        add(step.ratio_vs_previous, step.verdict_vs_previous)
        add(step.ratio_vs_baseline, step.verdict_vs_baseline)
        for phase in step.phases or ():
            add(phase.ratio_vs_previous, phase.verdict_vs_previous)
    return pairs


def printed_pairs(text: str) -> list[tuple[str, str]]:
    found = [(r, v) for v, r in VERDICT_THEN_RATIO.findall(text)]
    return found + RATIO_THEN_VERDICT.findall(text)


def renderings(result: LabResult) -> dict[str, str]:
    console = Console(width=400, record=True, color_system=None, force_terminal=False)
    print_summary(console, result)
    page = render_html(result)
    page = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    page = INLINE_TAGS.sub("", page)
    page = html.unescape(re.sub(r"<[^>]+>", " ‖ ", page))  # a block's end is no space
    return {"terminal": console.export_text(), "markdown": render_markdown(result), "html": page}


def summary_rows(output: str, text: str) -> list[list[str]]:
    """The summary table's rows as cells (the header row first), as each output has it:
    the table whose header has a verdict column (a replay's fidelity table comes first)."""
    tables: list[list[list[str]]] = []
    if output == "markdown":
        for block in text.split("\n\n"):
            lines = [ln for ln in block.splitlines() if ln.startswith("| ")]
            rows = [ln.strip("|").split(" | ") for ln in lines if not ln.startswith("| ---")]
            tables.append(rows)
    elif output == "terminal":
        for block in re.split(r"^┏.*$", text, flags=re.M)[1:]:
            lines = [ln for ln in block.splitlines() if ln.startswith(("┃", "│"))]
            tables.append([re.split(r"[┃│]", ln)[1:-1] for ln in lines])
    else:
        for table in re.findall(r"<table>(.*?)</table>", text, flags=re.S):
            rows = [
                re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)
                for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
            ]
            tables.append([[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in row] for row in rows])
    cleaned = [[[re.sub(r"[*`]", "", c).strip() for c in row] for row in t] for t in tables]
    return next(t for t in cleaned if t and "verdict" in t[0])


def wrong_verdict_cells(result: LabResult, rows: list[list[str]]) -> list[str]:
    """Summary rows whose verdict cell is not the verdict with the ratio it judged."""
    column = rows[0].index("verdict")
    wrong = []
    for step, row in zip(result.steps, rows[1:], strict=True):
        cell = row[column]
        ratio = step.ratio_vs_previous
        if ratio is None:
            ok = cell == "—"
        else:
            judged = f"{format_ratio(ratio)} vs {step.compared_with or 'the step before'}"
            after = r"(?: \(on an? \w+ replay\))?"  # a replay's fidelity, beside the verdict
            ok = (
                re.fullmatch(rf"({VERDICT})(?: \([^)]*\))? {re.escape(judged)}{after}", cell)
                is not None
            )
        if not ok:
            wrong.append(f"{step.name}: {cell!r}")
    return wrong


@pytest.mark.parametrize("name", sorted(p.name for p in RESULTS.iterdir() if p.is_dir()))
def test_every_ratio_beside_a_verdict_is_the_pair_it_judged(name: str) -> None:
    result = load_result(RESULTS / name)
    allowed = judged_pairs(result)
    page = render_html(result)
    for output, text in renderings(result).items():
        printed = printed_pairs(text)
        assert printed, f"{name}: no verdict beside a ratio in the {output} output"
        wrong = [pair for pair in printed if pair not in allowed]
        assert not wrong, f"{name}, {output}: a verdict beside another pair's ratio: {wrong}"
        rows = summary_rows(output, page if output == "html" else text)
        assert not wrong_verdict_cells(result, rows), f"{name}, {output}"


def test_a_bare_verdict_beside_the_baseline_column_is_caught() -> None:
    result = load_result(RESULTS / "smoke-a")
    old_summary = (  # how the summary read before: the verdict column had no ratio
        "| step | what changed | tx/s | × baseline | verdict | checks |\n"
        "| --- | --- | ---: | ---: | --- | --- |\n"
        "| **baseline** | `-M simple` | 764 ±20% | ×1.00 [1.00–1.00] | *n/a* | 2 ok |\n"
        "| **async_commit** | `x` | 1,458 ±6% | ×1.91 [1.60–2.32] | **faster** | 2 ok |\n"
        "| **select_only** | `y` | 12.4k ±1% | ×16.26 [14.12–19.11] | **faster** | 2 ok |\n"
    )
    wrong = wrong_verdict_cells(result, summary_rows("markdown", old_summary))
    assert [w.split(":")[0] for w in wrong] == ["baseline", "async_commit", "select_only"]


@pytest.mark.parametrize("name", sorted(p.name for p in RESULTS.iterdir() if p.is_dir()))
def test_report_md_emphasis_renders_in_commonmark(name: str) -> None:
    """No emphasis delimiter is left as literal text by a CommonMark reader (GitHub's)."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(render_markdown(load_result(RESULTS / name)))
    texts = [
        child.content
        for token in tokens
        if token.type == "inline"
        for child in token.children or ()
        if child.type == "text"
    ]
    leftover = [t for t in texts if "**" in t or t.startswith("*") or t.endswith("*")]
    assert not leftover, leftover
