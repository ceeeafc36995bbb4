"""Which statements got faster or slower between a step and the step it derives from
(pure): the "why" of an A/B across PostgreSQL versions, statement by statement.

Every run of a step reads pg_stat_statements (snapshots.py): each statement's calls
and mean time in that run. A statement's time per call in a step is the median of
its runs'; two steps are compared on the statements both ran (the same normalized
text), pgopt's own statements (its sampler, its snapshots) left out. A statement
moved when its time per call changed by `MOVED` or more; the report shows those
that moved most, each way. Time per call is the server's own (execution only),
so it says where the server's work changed, not what the client waited for.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from ..model.result import LabResult, StepResult

# what pgopt and pgbench read for themselves: statistics, the WAL position, catalogs
OWN_STATEMENT = re.compile(r"\bpg_stat_|\bpg_current_wal_|\bpg_catalog\.", re.IGNORECASE)
MOVED = 0.10  # a tenth faster or slower a call
TOP = 3


@dataclass(frozen=True)
class StatementMove:
    query: str
    ms_before: float  # the parent step's median time per call
    ms_after: float
    calls: float  # the step's median calls a run

    @property
    def ratio(self) -> float:
        return self.ms_after / self.ms_before


@dataclass(frozen=True)
class StatementComparison:
    """A step's statements against those of the step it derives from."""

    step: str
    parent: str
    faster: tuple[StatementMove, ...]  # most moved first
    slower: tuple[StatementMove, ...]
    compared: int  # statements both steps ran


def statement_times(
    step: StepResult, key_of: Callable[[str], str | None] | None = None
) -> dict[str, tuple[str, float, float]]:
    """A step's statements, from pg_stat_statements of each run: key -> (the query,
    median ms a call, median calls a run). `key_of` names a statement by its text
    (None: not one to count); by default, the text itself, pgopt's own left out."""
    key_of = key_of or _workload_statement
    times: dict[str, list[float]] = {}
    calls: dict[str, list[float]] = {}
    text: dict[str, str] = {}
    for run in step.runs:
        for row in (run.stats or {}).get("statements", []):
            key = key_of(str(row["query"]))
            if key is None or not row.get("calls"):
                continue
            times.setdefault(key, []).append(float(row["mean_ms"]))
            calls.setdefault(key, []).append(float(row["calls"]))
            text[key] = str(row["query"])
    return {k: (text[k], statistics.median(times[k]), statistics.median(calls[k])) for k in times}


def _workload_statement(query: str) -> str | None:
    return None if OWN_STATEMENT.search(query) else query


def compare_statements(step: StepResult, parent: StepResult) -> StatementComparison:
    before, after = statement_times(parent), statement_times(step)
    moves = [
        StatementMove(q, before[q][1], ms, calls)
        for q, (_, ms, calls) in after.items()
        if q in before and before[q][1] > 0 and ms > 0
    ]
    faster = sorted((m for m in moves if m.ratio <= 1 - MOVED), key=lambda m: m.ratio)
    slower = sorted((m for m in moves if m.ratio >= 1 + MOVED), key=lambda m: -m.ratio)
    return StatementComparison(
        step.name, parent.name, tuple(faster[:TOP]), tuple(slower[:TOP]), len(moves)
    )


def across_server_moves(result: LabResult) -> list[StatementComparison]:
    """Each step run on another server than the step it derives from (an A/B across
    versions), where both read pg_stat_statements."""
    by_name = {s.name: s for s in result.steps}
    out = []
    for step in result.steps:
        parent = by_name.get(step.compared_with or "")
        if parent is None or step.server is None or parent.server is None:
            continue
        if step.server.get("name") == parent.server.get("name"):
            continue
        comparison = compare_statements(step, parent)
        if comparison.compared:
            out.append(comparison)
    return out
