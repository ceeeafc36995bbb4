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
measures both against an application's own ratio.
"""

from __future__ import annotations


def application_bound(database_ratio: float, share: float) -> float:
    """The most an application gains from a database `database_ratio` times as fast
    (throughput B/A), when the database is `share` of its sessions' busy time (Amdahl's
    law: the application's own share is not made faster)."""
    return 1.0 / ((1.0 - share) + share / database_ratio)


def shared_cpu_estimate(database_ratio: float, cpu_share: float, cpu_ratio: float) -> float:
    """What an application on the database's own CPUs, all busy, gains from a database
    `database_ratio` times as fast whose CPU a transaction becomes `cpu_ratio` of what
    it was, when the database takes `cpu_share` of the busy CPU: the CPU a request
    takes, before over after, and no more than the database's own ratio."""
    gain = 1.0 / ((1.0 - cpu_share) + cpu_share * cpu_ratio)
    return min(gain, database_ratio) if database_ratio >= 1.0 else max(gain, database_ratio)
