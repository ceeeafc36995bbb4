"""Read pgbench's `-l` transaction log: the latencies behind the percentiles, and the
run's throughput second by second.

pgopt takes the per-second series from this log rather than from pgbench's `-P`:
with `-P` on, pgbench's first thread waits on its sockets with a timeout so that it
can print on time, and that costs pgbench about 6% more CPU per transaction
(bench/harness_cost.py), where the log, sampled to about 20,000 lines a run, costs
2–3%: most of it is a clock read per transaction, whatever the sampling rate, so
only a step's detailed runs keep a log (engine/workloads.py). A sampled log gives
each second's count times 1 / the sampling rate: an estimate whose noise is one over
the square root of the lines logged in that second, so a series is trusted only
where its seconds hold enough lines (`trusted_rates`).

Line: client_id transaction_no time script_no time_epoch time_us [lag] [retries];
`time` is 'failed' or 'skipped' (15+) for transactions that did not commit.
"""

from __future__ import annotations

import statistics
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

# A second estimated from fewer lines is too noisy to call a stall: half the median
# second is 3.5 standard deviations below a median of 50 lines.
MIN_LINES_PER_SECOND = 50


@dataclass(frozen=True)
class Second:
    """The transactions that committed in the second ending `time_s` after the start."""

    time_s: float
    tps: float  # estimated: the lines logged in that second / the sampling rate
    logged: int


@dataclass(frozen=True)
class TransactionLog:
    """What one run's log says: latencies, and every whole second."""

    latencies_us: array[int]
    seconds: tuple[Second, ...]
    sampling_rate: float


def read_transaction_log(
    lines: Iterable[str],
    *,
    started_us: int,
    whole_seconds: int,
    sampling_rate: float,
) -> TransactionLog:
    """Committed transactions of the log `lines`, in the `whole_seconds` one-second
    bins after `started_us` (epoch microseconds), and their latencies. A transaction
    after the last whole second (the run's tail, shorter than a second) counts for its
    latency only."""
    latencies: array[int] = array("q")
    counts = [0] * max(whole_seconds, 0)
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or not fields[2].isdigit():
            continue
        ended_us = int(fields[4]) * 1_000_000 + int(fields[5])
        latencies.append(int(fields[2]))
        index = (ended_us - started_us) // 1_000_000
        if 0 <= index < len(counts):
            counts[index] += 1
    seconds = tuple(
        Second(time_s=float(i + 1), tps=n / sampling_rate, logged=n) for i, n in enumerate(counts)
    )
    return TransactionLog(latencies, seconds, sampling_rate)


def trusted_rates(log: TransactionLog) -> list[float]:
    """The per-second rates, or [] when a sampled log's typical second holds too few
    lines to tell a stall from sampling noise (a run logged at a guessed rate, or a
    slow step logged sparsely)."""
    if not log.seconds:
        return []
    typical = statistics.median(s.logged for s in log.seconds)
    if log.sampling_rate < 1.0 and typical < MIN_LINES_PER_SECOND:
        return []
    return [s.tps for s in log.seconds]
