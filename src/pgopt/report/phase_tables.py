"""The tables of a lab whose steps run in phases (the batch lab's load, index,
analyze, ...): seconds per phase of each step, each marked by its verdict against
the baseline's phase, and each phase's top waits (pure: report blocks)."""

from __future__ import annotations

from ..model.result import LabResult
from . import fields
from .blocks import Cell, Span, Style, Table, plain
from .fmt import format_rate


def phase_tables(result: LabResult) -> list[Table]:
    """Seconds per phase of each step, and where each phase spent its time."""
    out = []
    names, rows = fields.phase_table(result)
    if rows:
        cells = []
        for row in rows:
            marks = [Cell((Span(fields.phase_cell(c), _phase_style(c)),)) for c in row.cells]
            cells.append(
                (Cell((Span(row.step, Style.STRONG),)), *marks, Cell(plain(format_rate(row.total))))
            )
            if row.article is not None:
                cells.append(
                    (
                        Cell((Span("article", Style.MUTED),)),
                        *(Cell((Span(c, Style.MUTED),)) for c in fields.article_cells(row)),
                    )
                )
        out.append(
            Table(
                header=("step", *names, "total"),
                rows=tuple(cells),
                numeric=frozenset(range(1, len(names) + 2)),
                caption=fields.PHASE_LEGEND,
                title="Seconds per phase",
            )
        )
    names, wait_rows = fields.phase_waits_table(result)
    if wait_rows:
        out.append(
            Table(
                header=("step", *names),
                rows=tuple(
                    (
                        Cell((Span(r.step, Style.STRONG),)),
                        *(Cell(plain("\n".join(c)) if c else plain("—")) for c in r.cells),
                    )
                    for r in wait_rows
                ),
                caption=fields.PHASE_WAITS_LEGEND,
                title="Where each phase spent its time",
            )
        )
    return out


def _phase_style(cell: tuple[float, str] | None) -> Style:
    if cell is None:
        return Style.PLAIN
    return {"faster": Style.GOOD, "slower": Style.BAD}.get(cell[1], Style.PLAIN)
