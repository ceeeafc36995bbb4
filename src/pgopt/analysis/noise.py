"""What a run's per-second samples say about the run itself (pure).

The throughput of every second, read from pgbench's transaction log
(pgbench/transaction_log.py; [] where a sparse sample cannot say, or where the run
kept no log). The warm-up is a pgbench run of its own before the measured one, so
the series holds measured seconds only. One use, the same for every run whatever
the step (VERDICTS.md: never pool seconds as runs): a run is *contaminated* when a
second fell below half the median second (a stall: a checkpoint storm, a neighbour,
the machine swapping). The engine then runs the whole round again, once, under a
rule fixed in advance.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

STALL_SHARE = 0.5
MIN_SECONDS_TO_JUDGE = 3


def contamination(per_second: Sequence[float]) -> str | None:
    """Why the run looks disturbed, or None: a second below half the median second
    (the first second, when clients connect, is never judged). Fewer than 3 seconds
    left cannot be judged."""
    seconds = list(per_second[1:])
    if len(seconds) < MIN_SECONDS_TO_JUDGE:
        return None
    middle = statistics.median(seconds)
    if middle <= 0:
        return None
    worst_index = min(range(len(seconds)), key=seconds.__getitem__)
    worst = seconds[worst_index]
    if worst >= STALL_SHARE * middle:
        return None
    return (
        f"second {worst_index + 2} ran at {worst:.0f} tx/s, below half "
        f"the run's median second ({middle:.0f} tx/s)"
    )
