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


def statement_times(step: StepResult) -> dict[str, tuple[float, float]]:
    """The workload's statements of a step: query -> (median ms a call, median calls)."""
    times: dict[str, list[float]] = {}
    calls: dict[str, list[float]] = {}
    for run in step.runs:
        for row in (run.stats or {}).get("statements", []):
            query = str(row["query"])
            if OWN_STATEMENT.search(query) or not row.get("calls"):
                continue
            times.setdefault(query, []).append(float(row["mean_ms"]))
            calls.setdefault(query, []).append(float(row["calls"]))
    return {q: (statistics.median(times[q]), statistics.median(calls[q])) for q in times}


def compare_statements(step: StepResult, parent: StepResult) -> StatementComparison:
    before, after = statement_times(parent), statement_times(step)
    moves = [
        StatementMove(q, before[q][0], ms, calls)
        for q, (ms, calls) in after.items()
        if q in before and before[q][0] > 0 and ms > 0
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
