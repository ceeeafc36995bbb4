"""A finished, valid pgbench run, as the runner hands it over."""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from ..pgbench.parse import ProgressSample, Summary


@dataclass(frozen=True)
class PgbenchResult:
    """A finished, valid pgbench run."""

    args: tuple[str, ...]
    summary: Summary
    progress: tuple[ProgressSample, ...]
    latencies_us: array[int]
    stdout: str
    stderr: str
    wall_s: float
    client_cpu_s: float
    own_cpu_s: float = 0.0  # pgopt's own process (all its threads) while pgbench ran
