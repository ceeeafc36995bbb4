"""Which statements changed plan between a step and the step it derives from (pure):
the "why" of an index proof ("the lookup now scans orders_customer") or of a
setting change, from the generic plans each step recorded (model/plans.py).

A statement is compared where both steps explained it (the same normalized text);
its plan changed where its shape did (plans/shape.py: each node's kind, index,
relation and depth, costs left out), and `change_summary` says how."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.plans import StatementPlan
from ..model.result import LabResult, StepResult
from ..plans.shape import change_summary


@dataclass(frozen=True)
class PlanChange:
    """One statement whose plan changed: before (the parent's), after (the step's)."""

    query: str
    summary: str  # "Seq Scan on public.orders → Index Scan using ... on public.orders"
    before: StatementPlan
    after: StatementPlan


@dataclass(frozen=True)
class PlanComparison:
    """A step's plans against those of the step it derives from."""

    step: str
    parent: str
    changed: tuple[PlanChange, ...]
    kept: int  # statements explained in both whose plan stayed the same


def compare_plans(step: StepResult, parent: StepResult) -> PlanComparison:
    """The statements both steps explained: those whose plan changed, in the step's
    order (heaviest first), and how many kept theirs."""
    before = {p.query: p for p in parent.plans or () if p.plan is not None}
    changed: list[PlanChange] = []
    kept = 0
    for after in step.plans or ():
        earlier = before.get(after.query)
        if earlier is None or earlier.plan is None or after.plan is None:
            continue
        summary = change_summary(earlier.plan, after.plan)
        if summary is None:
            kept += 1
        else:
            changed.append(PlanChange(after.query, summary, earlier, after))
    return PlanComparison(step.name, parent.name, tuple(changed), kept)


def lab_plan_changes(result: LabResult) -> list[PlanComparison]:
    """Every step that derives from another, where both recorded plans and share a
    statement explained in each, in the lab's order."""
    by_name = {s.name: s for s in result.steps}
    out = []
    for step in result.steps:
        parent = by_name.get(step.compared_with or "")
        if parent is None or step.plans is None or parent.plans is None:
            continue
        comparison = compare_plans(step, parent)
        if comparison.changed or comparison.kept:
            out.append(comparison)
    return out
