"""A finished, valid pgbench run, as the runner hands it over."""

from __future__ import annotations

from dataclasses import dataclass

from .parse import Summary
from .transaction_log import TransactionLog


@dataclass(frozen=True)
class PgbenchResult:
    """A finished, valid pgbench run."""

    args: tuple[str, ...]
    summary: Summary
    log: TransactionLog  # the sampled `-l` log: latencies and the per-second series
    stdout: str
    stderr: str
    wall_s: float
    client_cpu_s: float
    own_cpu_s: float = 0.0  # pgopt's own process (all its threads) while pgbench ran
