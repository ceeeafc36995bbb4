"""The statements that moved in the report (pure): for each step run on another
server than the step it derives from (an A/B across PostgreSQL versions), the
statements whose time per call changed most, each way (analysis/statement_moves.py).
The summary gives one line for each; the "Statements" section a table of them."""

from __future__ import annotations

from ..analysis.statement_moves import StatementComparison, StatementMove, across_server_moves
from ..model.result import LabResult
from ..words import plural, short_query
from .blocks import Block, Cell, Paragraph, Section, Span, Style, Table, plain


def summary_lines(result: LabResult) -> list[str]:
    """'b vs a: faster ×0.62: select ... (7.35 → 4.55 ms a call)', the statements that
    moved most each way, or that none moved."""
    lines = []
    for c in across_server_moves(result):
        moved = [("faster", m) for m in c.faster] + [("slower", m) for m in c.slower]
        for way, m in moved:
            lines.append(
                f"{c.step} vs {c.parent}: {way} {_ratio(m.ratio)}: {short_query(m.query)} "
                f"({_ms(m.ms_before)} → {_ms(m.ms_after)} ms a call)"
            )
        if not moved:
            lines.append(
                f"{c.step} vs {c.parent}: none of {plural(c.compared, 'statement')} moved "
                "by 10% or more a call"
            )
    return lines


def sections(result: LabResult) -> list[Section]:
    comparisons = across_server_moves(result)
    if not comparisons:
        return []
    blocks: list[Block] = [
        Paragraph(
            plain(
                "Each statement's time per call on the server (pg_stat_statements, the "
                "median of each step's runs), against the step it derives from on the other "
                "server: those that moved by 10% or more, most first, each way."
            ),
            muted=True,
        )
    ]
    for c in comparisons:
        blocks += _comparison(c)
    return [Section("Statements", tuple(blocks))]


def _comparison(c: StatementComparison) -> list[Block]:
    moved = [("faster", m) for m in c.faster] + [("slower", m) for m in c.slower]
    head = Paragraph(
        (Span(c.step, Style.STRONG), Span(" against "), Span(c.parent, Style.STRONG),
         Span(f": {plural(c.compared, 'statement')} ran in both"))
    )  # fmt: skip
    if not moved:
        return [head, Paragraph(plain("None moved by 10% or more a call."))]
    rows = tuple(_row(way, m) for way, m in moved)
    header = (
        "",
        "statement",
        f"ms a call, {c.parent}",
        f"ms a call, {c.step}",
        "ratio",
        "calls a run",
    )
    return [head, Table(header, rows, numeric=frozenset({2, 3, 4, 5}))]


def _row(way: str, m: StatementMove) -> tuple[Cell, ...]:
    style = Style.GOOD if way == "faster" else Style.BAD
    return (
        Cell((Span(way, style),)),
        Cell((Span(short_query(m.query, 90), Style.CODE),)),
        Cell(plain(_ms(m.ms_before))),
        Cell(plain(_ms(m.ms_after))),
        Cell(plain(_ratio(m.ratio))),
        Cell(plain(f"{m.calls:,.0f}")),
    )


def _ratio(value: float) -> str:
    """×0.62, or two significant digits below a tenth (×0.0012): never ×0.00."""
    return f"×{value:.2f}" if value >= 0.1 else f"×{value:.2g}"


def _ms(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:,.0f}"
