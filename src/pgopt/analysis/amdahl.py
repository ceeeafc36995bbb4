"""What a faster database gives the application that uses it (pure): Amdahl's bound.

pgopt measures the database's throughput; a request of the application spends only
part of its time there (the rest is the application's own work, between statements
or inside a transaction). Where the database is `share` of that time and becomes
`ratio` times as fast, the application gains at most 1 / ((1 - share) + share / ratio),
as long as its own time stays as it was (an application that shares the database's
CPUs may get some of its own time back too: bench/replay_truth.py measures it).
"""

from __future__ import annotations


def application_bound(database_ratio: float, share: float) -> float:
    """The most an application gains from a database `database_ratio` times as fast
    (throughput B/A), when the database is `share` of its sessions' busy time (Amdahl's
    law: the application's own share is not made faster)."""
    return 1.0 / ((1.0 - share) + share / database_ratio)
