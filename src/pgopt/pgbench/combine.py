"""The quiet pgbench runs of one step in a round of interleaved slices, as one run
(pure): what the round's record keeps of them.

Every slice runs the same seconds, so the step's rate is the mean of the slices'
rates: its transactions over its measured seconds, connection time excluded as
pgbench excludes it. Counts add up; the latency average is weighted by each
slice's transactions. Slices are quiet runs (no transaction log, no
per-statement report: engine/plan.py keeps detailed rounds whole), so there is
no log to join.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace

from .parse import ScriptSummary, Summary
from .record import PgbenchResult


def combined(slices: Sequence[PgbenchResult]) -> PgbenchResult:
    """One run made of `slices`, the quiet runs of one step in one round, in order."""
    if not slices:
        raise ValueError("no slices to combine")
    first = slices[0]
    if len(slices) == 1:
        return first
    summaries = [s.summary for s in slices]
    return PgbenchResult(
        args=first.args,
        summary=_summary(summaries),
        log=first.log,
        stdout="\n".join(s.stdout for s in slices),
        stderr="\n".join(s.stderr for s in slices if s.stderr),
        wall_s=sum(s.wall_s for s in slices),
        client_cpu_s=sum(s.client_cpu_s for s in slices),
        own_cpu_s=sum(s.own_cpu_s for s in slices),
    )


def _summary(summaries: Sequence[Summary]) -> Summary:
    first = summaries[0]
    transactions = sum(s.transactions for s in summaries)
    durations = [s.duration_s for s in summaries]
    averages = [(s.latency_avg_ms, s.transactions) for s in summaries]
    latency = None
    if transactions and all(avg is not None for avg, _ in averages):
        latency = sum(avg * n for avg, n in averages if avg is not None) / transactions
    return replace(
        first,
        duration_s=None if None in durations else sum(d for d in durations if d is not None),
        transactions=transactions,
        failed=sum(s.failed for s in summaries),
        retried=sum(s.retried for s in summaries),
        latency_avg_ms=latency,
        latency_stddev_ms=None,  # not recoverable from the slices' own
        initial_connection_ms=_mean([s.initial_connection_ms for s in summaries]),
        tps=statistics.fmean(s.tps for s in summaries),
        scripts=_scripts([s.scripts for s in summaries]),
        statements=(),
    )


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def _scripts(per_slice: Sequence[tuple[ScriptSummary, ...]]) -> tuple[ScriptSummary, ...]:
    """Each script's transactions added up and its rate averaged over the slices."""
    first = per_slice[0]
    if any(len(scripts) != len(first) for scripts in per_slice):
        return ()
    out = []
    for i, script in enumerate(first):
        counts = [scripts[i].transactions for scripts in per_slice]
        rates = [scripts[i].tps for scripts in per_slice]
        out.append(
            replace(
                script,
                transactions=None if None in counts else sum(c for c in counts if c is not None),
                tps=None if None in rates else statistics.fmean(r for r in rates if r is not None),
            )
        )
    return tuple(out)
