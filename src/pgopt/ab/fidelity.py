"""How faithful a synthesized replay was (pure): each statement's share of calls and
of time in the replay beside its share in the source.

The source's shares come from its pg_stat_statements (calls; execution time, on
the server), renormalized over the statements replayed. The replay's come from
A's timed runs: pgbench's transactions per script (each script is one
statement) and its average latency per statement, which is what the client
waits: the server's time plus a round trip, so cheap statements weigh a little
more in the replay than in the source.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..model.result import Run
from ..words import plural
from .synthesize import Synthesis
from .workload_files import flat_query


@dataclass(frozen=True)
class FidelityRow:
    name: str
    query: str
    source_calls: float  # shares, 0..1
    replay_calls: float
    source_time: float
    replay_time: float


def fidelity(synthesis: Synthesis, runs: tuple[Run, ...]) -> list[FidelityRow] | None:
    """The rows for the scripts of `synthesis` as A's `runs` ran them; None when they
    did not count transactions per script (a single script)."""
    calls = [0] * len(synthesis.scripts)
    latency: dict[int, list[float]] = defaultdict(list)
    for run in runs:
        if not run.script_transactions or len(run.script_transactions) != len(calls):
            return None
        for i, n in enumerate(run.script_transactions):
            calls[i] += n
        per_script: dict[int, float] = defaultdict(float)
        for statement in run.statements or ():
            per_script[statement.script] += statement.latency_ms
        for number, ms in per_script.items():
            latency[number].append(ms)
    times = [calls[i] * _mean(latency.get(i + 1, [])) for i in range(len(calls))]
    source_calls = [s.statement.calls for s in synthesis.scripts]
    source_time = [s.statement.total_ms for s in synthesis.scripts]
    return [
        FidelityRow(
            s.name,
            s.statement.query,
            _share(source_calls, i),
            _share(calls, i),
            _share(source_time, i),
            _share(times, i),
        )
        for i, s in enumerate(synthesis.scripts)
    ]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _share(values: list[float] | list[int], i: int) -> float:
    total = sum(values)
    return values[i] / total if total else 0.0


def widest_gaps(rows: list[FidelityRow]) -> tuple[float, float]:
    """The largest difference, in points, between replay and source: calls, time."""
    calls = max((abs(r.replay_calls - r.source_calls) for r in rows), default=0.0)
    time = max((abs(r.replay_time - r.source_time) for r in rows), default=0.0)
    return calls * 100, time * 100


def fidelity_markdown(rows: list[FidelityRow], synthesis: Synthesis) -> str:
    calls_gap, time_gap = widest_gaps(rows)
    lines = [
        "# Fidelity of the synthesized workload",
        "",
        f"Replayed: {plural(len(rows), 'statement')}, {synthesis.replayed_share:.1%} of the "
        "source's "
        "execution time. Shares are among the replayed statements; the replay's are A's "
        "timed runs (pgbench's transactions per script, and latency per statement, which "
        "includes a round trip).",
        "",
        "| script | statement | calls: source | calls: replay | time: source | time: replay |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | `{flat_query(r.query, 70)}` | {r.source_calls:.1%} "
            f"| {r.replay_calls:.1%} | {r.source_time:.1%} | {r.replay_time:.1%} |"
        )
    lines += [
        "",
        f"Calls within {calls_gap:.1f} points of the source's mix; time within "
        f"{time_gap:.1f} points.",
    ]
    if time_gap > 10:
        lines.append(
            "Time differs more than calls: the replay's statements cost differently than "
            "the source's (its data is a copy, its parameters drawn from statistics, its "
            "caches and concurrency are not the source's)."
        )
    return "\n".join(lines) + "\n"
