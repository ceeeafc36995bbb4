"""What a run's per-second samples say about the run itself (pure).

The throughput of every second, read from pgbench's transaction log
(pgbench/transaction_log.py; [] where a sparse sample cannot say). Two uses, the
same for every run whatever the step (VERDICTS.md: never pool seconds as runs):

- the warm-up is part of the timed pgbench run and is trimmed from its figure:
  the transactions of the first `warmup` seconds are taken out, and the rate is
  that of the rest of the run, its last partial second included;
- a run is *contaminated* when, after the warm-up, a second fell below half the
  median second (a stall: a checkpoint storm, a neighbour, the machine swapping).
  The engine then runs the whole round again, once, under a rule fixed in advance.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

STALL_SHARE = 0.5
MIN_SECONDS_TO_JUDGE = 3


def trimmed_rate(
    transactions: int, tps: float, per_second: Sequence[float], warmup_s: int
) -> float:
    """The run's transactions per second after its first `warmup_s` seconds.

    `tps` is pgbench's own figure for the whole run (transactions over the time
    after connecting), `per_second` the throughput of each whole second in order; with
    no seconds to go by, the whole run's rate."""
    if warmup_s <= 0 or tps <= 0 or len(per_second) <= warmup_s:
        return tps
    elapsed = transactions / tps
    warm = sum(per_second[:warmup_s])
    remaining = elapsed - warmup_s
    if remaining <= 0 or warm >= transactions:
        return tps
    return (transactions - warm) / remaining


def contamination(per_second: Sequence[float], warmup_s: int) -> str | None:
    """Why the run looks disturbed, or None: a second after the warm-up below half the
    median second (the first second, when clients connect, is never judged). Fewer
    than 3 seconds left cannot be judged."""
    warmup_s = max(warmup_s, 1)
    seconds = list(per_second[warmup_s:])
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
        f"second {warmup_s + worst_index + 1} ran at {worst:.0f} tx/s, below half "
        f"the run's median second ({middle:.0f} tx/s)"
    )
