"""The plans in the report (pure): the statements whose generic plan changed between a
step and the step it derives from (analysis/plan_changes.py). The summary gives one
line per changed statement and one for those that kept their plan; the "Plans"
section shows each changed statement's two plans side by side."""

from __future__ import annotations

from ..analysis.plan_changes import PlanChange, PlanComparison, lab_plan_changes
from ..model.plans import StatementPlan
from ..model.result import LabResult
from ..words import plural, short_query
from .blocks import Block, Paragraph, Section, SideBySide, Span, Style, plain


def summary_lines(result: LabResult) -> list[str]:
    """'b vs a: select count(*) ... = $1: Seq Scan on public.orders → ...', one per
    changed statement, then how many statements kept their plan."""
    comparisons = lab_plan_changes(result)
    lines = [
        f"{c.step} vs {c.parent}: {short_query(change.query)}: {change.summary}"
        for c in comparisons
        for change in c.changed
    ]
    kept = [c for c in comparisons if c.kept]
    if kept:
        where = ", ".join(f"{c.step} vs {c.parent}" for c in kept)
        total = sum(c.kept for c in kept)
        lines.append(f"{plural(total, 'statement')} kept {_its(total)} plan ({where})")
    return lines


def sections(result: LabResult) -> list[Section]:
    """The "Plans" section, where some step has a parent whose plans it can be read
    against."""
    comparisons = lab_plan_changes(result)
    if not comparisons:
        return []
    blocks: list[Block] = [
        Paragraph(
            plain(
                "The generic plans of each step's top statements by time, taken after its "
                "first measured run on its own data and settings, against those of the "
                "step it derives from."
            ),
            muted=True,
        )
    ]
    for comparison in comparisons:
        blocks += _comparison_blocks(comparison)
    return [Section("Plans", tuple(blocks))]


def _comparison_blocks(comparison: PlanComparison) -> list[Block]:
    step, parent = comparison.step, comparison.parent
    counts = []
    if comparison.changed:
        counts.append(f"{plural(len(comparison.changed), 'statement')} changed plan")
    if comparison.kept:
        counts.append(f"{plural(comparison.kept, 'statement')} kept {_its(comparison.kept)} plan")
    head = Paragraph(
        (
            Span(step, Style.STRONG),
            Span(" against "),
            Span(parent, Style.STRONG),
            Span(": " + "; ".join(counts)),
        )
    )
    blocks: list[Block] = [head]
    for change in comparison.changed:
        blocks += _change_blocks(change, step, parent)
    return blocks


def _change_blocks(change: PlanChange, step: str, parent: str) -> list[Block]:
    before, after = change.before, change.after
    return [
        Paragraph((Span(" ".join(change.query.split()), Style.CODE),)),
        Paragraph((Span(change.summary, Style.STRONG),)),
        SideBySide(
            (
                (_heading(parent, before), "\n".join(before.lines)),
                (_heading(step, after), "\n".join(after.lines)),
            )
        ),
    ]


def _heading(step: str, plan: StatementPlan) -> str:
    """'a (cost 1,887.06)': the step, and its plan's estimated total cost."""
    return step if plan.total_cost is None else f"{step} (cost {plan.total_cost:,.2f})"


def _its(count: int) -> str:
    return "its" if count == 1 else "their"
