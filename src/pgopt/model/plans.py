"""The generic plans of a step's top statements, as result.json records them (a step's
`plans`): taken once per step, right after its first measured run, on that step's
own data and settings (engine/plan_capture.py); analysis/plan_changes.py compares
them with the plans of the step it derives from, report/plan_blocks.py shows them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..plans.shape import Plan, indexes_used, plan_lines, shape, total_cost


@dataclass(frozen=True)
class StatementPlan:
    """One statement's generic plan: `query` as pg_stat_statements normalizes it ($n
    for constants); `plan`, EXPLAIN's JSON of it as the server gave it, and what is
    read from it: `lines` as EXPLAIN's text shows it (costs and conditions), `shape`
    (each node's kind, index, relation and depth: what tells two plans apart), its
    `total_cost` and the `indexes` it scans. `error`: why it has no plan (then only
    `query` is set)."""

    query: str
    lines: tuple[str, ...] = ()
    shape: tuple[str, ...] = ()
    total_cost: float | None = None
    indexes: tuple[str, ...] = ()
    plan: dict[str, Any] | None = None
    error: str | None = None

    @classmethod
    def of(cls, query: str, plan: Plan) -> StatementPlan:
        """The record of `query`'s plan, EXPLAIN's JSON "Plan"."""
        return cls(
            query,
            lines=tuple("\n".join(plan_lines(plan)).splitlines()),
            shape=shape(plan),
            total_cost=total_cost(plan),
            indexes=indexes_used(plan),
            plan=plan,
        )
