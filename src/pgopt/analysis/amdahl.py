"""What a faster database gives the application that uses it (pure): Amdahl's bound.

pgopt measures the database's throughput; a request of the application spends only
part of its time there (the rest is the application's own work, between statements
or inside a transaction). Where the database is `share` of that time and becomes
`ratio` times as fast, the application gains at most 1 / ((1 - share) + share / ratio),
as long as its own time stays as it was.

An application that shares the database's CPUs gets more where its own work is
CPU on them: the CPU the database saves is its own. Where the database takes
`cpu_share` of the machine's busy CPU and B's database spends `cpu_ratio` of A's CPU
a transaction, it gains about 1 / ((1 - cpu_share) + cpu_share * cpu_ratio): Amdahl's
law again, on CPU rather than time, never more than the database's own ratio
(`shared_cpu_estimate`). Clients that only wait for the CPU (a load generator)
get the waiting back instead, up to the database's ratio. bench/replay_truth.py
measures both against an application's own ratio. The estimate's premise is CPUs
that are busy: where the watch saw them idle more than half the time, the CPU the
database saves is not what holds the application back, and none is made
(`cpus_bind`; a watch that saw them 4% busy gave ×1.58 for a change sysbench
measured at ×57.9). Its interval (`shared_cpu_interval`) comes from the rounds: each
round's B against its A gives a database ratio and a CPU ratio, so an estimate; the
database's CPU share is the watch's one figure, held as measured.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import stats

BUSY_CPUS = 0.5  # the machine's CPUs busy at least this share of the watch: they bind


def application_bound(database_ratio: float, share: float) -> float:
    """The most an application gains from a database `database_ratio` times as fast
    (throughput B/A), when the database is `share` of its sessions' busy time (Amdahl's
    law: the application's own share is not made faster)."""
    return 1.0 / ((1.0 - share) + share / database_ratio)


def cpus_bind(host_busy: float) -> bool:
    """Whether the machine's CPUs were busy enough over the watch for the CPU the
    database saves to be the application's (`shared_cpu_estimate`'s premise)."""
    return host_busy >= BUSY_CPUS


def shared_cpu_estimate(database_ratio: float, cpu_share: float, cpu_ratio: float) -> float:
    """What an application on the database's own CPUs, all busy, gains from a database
    `database_ratio` times as fast whose CPU a transaction becomes `cpu_ratio` of what
    it was, when the database takes `cpu_share` of the busy CPU: the CPU a request
    takes, before over after, and no more than the database's own ratio."""
    gain = 1.0 / ((1.0 - cpu_share) + cpu_share * cpu_ratio)
    return min(gain, database_ratio) if database_ratio >= 1.0 else max(gain, database_ratio)


# one run's figures for the estimate's interval: its round, its transactions a second,
# its server's CPU seconds and its transactions
RunFigures = tuple[int, float, float, int]


def round_pairs(a: Sequence[RunFigures], b: Sequence[RunFigures]) -> list[tuple[float, float]]:
    """(database ratio, CPU ratio a transaction) of B's run against A's in each round
    both ran in with every figure known."""
    base = {r: (tps, cpu / tx) for r, tps, cpu, tx in a if tps > 0 and tx > 0 and cpu > 0}
    out = []
    for r, tps, cpu, tx in b:
        if r in base and tps > 0 and tx > 0 and cpu > 0:
            a_tps, a_cpu = base[r]
            out.append((tps / a_tps, (cpu / tx) / a_cpu))
    return out


def shared_cpu_interval(
    rounds: Sequence[tuple[float, float]], cpu_share: float, level: float = 0.95
) -> tuple[float, float] | None:
    """The interval of `shared_cpu_estimate` over `rounds` (each round's database ratio
    and CPU ratio): the Student-t interval of the geometric mean of each round's
    estimate; None under two rounds."""
    if len(rounds) < 2:
        return None
    each = [shared_cpu_estimate(ratio, cpu_share, cpu) for ratio, cpu in rounds]
    return stats.geometric_interval(each, level)
