"""The generic plans of a step's top statements, taken once per step: right after its
first measured run, while the step's settings are live and `pgopt_lab` holds the
step's own data (B's index there, A's absent), so the plans are the ones its runs
got.

The statements are the run's own (analysis/observed.py: the top ones by time in
pg_stat_statements and every statement a replay tagged), at most MAX_PLANS of them
by time; left out are those no plan is made for (BEGIN, SET, DDL) and what pgopt
and pgbench read for themselves (pgopt's observer: pg_stat_* views and the WAL
position; pgbench at its start: pg_catalog). Each is explained on the lab database
(plans/generic.py); one the server cannot explain is kept with the reason. Without
pg_stat_statements a run has no statements and nothing is taken.
"""

from __future__ import annotations

from typing import Any

import psycopg

from ..analysis.statement_moves import OWN_STATEMENT
from ..model.outcomes import StepOutcome
from ..model.plans import StatementPlan
from ..plans.generic import PlanError, generic_plan, makes_a_plan
from ..servers.base import Target

MAX_PLANS = 8


def take_once(target: Target, outcome: StepOutcome, stats: dict[str, Any]) -> None:
    """The step's plans from this run's statements, unless an earlier run gave them."""
    if outcome.plans is None:
        outcome.plans = capture(target, stats)


def statements_to_explain(stats: dict[str, Any]) -> list[str]:
    """The run's statements worth a plan, heaviest first (pure)."""
    rows = sorted(stats.get("statements", ()), key=lambda r: r["total_ms"], reverse=True)
    queries = [r["query"] for r in rows]
    chosen = [q for q in queries if not OWN_STATEMENT.search(q) and makes_a_plan(q)]
    return chosen[:MAX_PLANS]


def capture(target: Target, stats: dict[str, Any]) -> tuple[StatementPlan, ...] | None:
    """Each chosen statement of a run's statistics with its generic plan, or the reason
    it has none; None when the run has no statement to explain."""
    queries = statements_to_explain(stats)
    if not queries:
        return None
    with target.connect() as conn:
        return tuple(_explained(conn, query) for query in queries)


def _explained(conn: psycopg.Connection[Any], query: str) -> StatementPlan:
    try:
        plan = generic_plan(conn, query)
    except PlanError as e:
        return StatementPlan(query, error=str(e))
    return StatementPlan.of(query, plan)
