"""Sample what the lab's backends are doing, many times a second, during a timed run.

A thread with its own connection polls pg_stat_activity for the backends of
pgbench (application_name `pgopt`, set by the target's client environment) and
counts each backend's state:

- `CPU`: active with no wait event (running, or runnable and waiting for a core);
- `Type:Event`: active and waiting, e.g. `IO:WalSync`, `Lock:transactionid`;
- `IdleInTransaction`: between statements of an open transaction;
- `Client:ClientRead`: idle, waiting for the client's next command.

Shares of these counts say where the server's time went: the bottleneck. In a
run timed by phase, each sample is also counted under the phase that was running
(`phase`, set by the engine), so every phase gets its own shares.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

import psycopg

from .target.base import LAB_DATABASE, Target

INTERVAL_S = 0.02
BENCH_APPLICATION = "pgopt"
SAMPLER_APPLICATION = "pgopt-sampler"

QUERY = """
select state, wait_event_type, wait_event
from pg_stat_activity
where datname = %s and application_name = %s and pid <> pg_backend_pid()
"""


def classify(state: str | None, wait_type: str | None, wait_event: str | None) -> str | None:
    """The bucket of one backend in one sample, or None for backends not worth counting."""
    if state == "active":
        return f"{wait_type}:{wait_event}" if wait_type else "CPU"
    if state in ("idle in transaction", "idle in transaction (aborted)"):
        return "IdleInTransaction"
    if state == "idle":
        return "Client:ClientRead"
    return None


def count_rows(rows: Iterable[tuple[Any, Any, Any]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for state, wait_type, wait_event in rows:
        bucket = classify(state, wait_type, wait_event)
        if bucket is not None:
            counts[bucket] += 1
    return counts


def shares(counts: Counter[str]) -> dict[str, float]:
    """Counts as fractions of all backend-samples, largest first."""
    total = sum(counts.values())
    if not total:
        return {}
    return {k: round(v / total, 4) for k, v in counts.most_common()}


class WaitSampler:
    """Context manager: samples from entry to exit on a thread of its own."""

    def __init__(self, target: Target, interval_s: float = INTERVAL_S) -> None:
        self.target = target
        self.interval_s = interval_s
        self.counts: Counter[str] = Counter()
        self.samples = 0
        self.phase: str | None = None
        self.phase_counts: dict[str, Counter[str]] = {}
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pgopt-sampler", daemon=True)

    def __enter__(self) -> WaitSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        params = {**self.target.conninfo(), "application_name": SAMPLER_APPLICATION}
        try:
            with psycopg.connect(**params, autocommit=True, connect_timeout=10) as conn:
                cur = conn.cursor()
                args = (LAB_DATABASE, BENCH_APPLICATION)
                next_at = time.monotonic()
                while not self._stop.is_set():
                    # pg_stat_activity is a snapshot per transaction; autocommit gives a new one
                    phase = self.phase
                    counts = count_rows(cur.execute(QUERY, args).fetchall())
                    self.counts.update(counts)
                    if phase is not None:
                        self.phase_counts.setdefault(phase, Counter()).update(counts)
                    self.samples += 1
                    next_at += self.interval_s
                    self._stop.wait(max(0.0, next_at - time.monotonic()))
        except psycopg.Error as e:
            self.error = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
