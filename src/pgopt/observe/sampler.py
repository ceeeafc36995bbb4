"""Sample what the watched sessions are doing, a few times a second, during a timed run.

Each sample counts the watched backends by what they are doing (queries/
wait_sample.sql): `CPU`, a wait event such as `IO:WalSync`, `IdleInTransaction`
or `Client:ClientRead`. Shares of these counts say where the server's time went.

The observer must not change what it observes, and two costs were measured on
this project's 2-core virtual machines:

- CPU. Every sample wakes the sampler and the backend serving it, about 0.6 ms
  of client and 0.35 ms of server CPU per sample, and on a machine the workload
  keeps busy each wake-up also costs the workload more than that CPU time. 50
  samples a second cost about 6% of the throughput; 10 a second cost select-only
  about 1% (bench/README.md). So the rate follows the run's length: about 150
  samples a run, at most 5 and at least 2 a second.
- The xmin horizon. Taking samples inside the server (a function sleeping
  between samples) holds a snapshot the whole time: dead rows of the last
  fraction of a second cannot be pruned, and an update-heavy workload lost
  7.5% of its throughput. Here every sample is its own short statement.

Enough samples: a step runs at least 3 rounds, 4 by default. A run of 30 s or
more gets its 150 samples, 600 a step, which bound a share to +-4 points (95%, the
binomial bound at 50%); a 20-s run (the labs' length) gets 100, 400 a step, +-4.9
points: as fine as the 5-point moves the why-line reports. Each sample sees every
backend of the step, so runs with more clients, and more rounds, narrow it further.
Shorter runs (quick mode, the demo) trade precision for time: a 5-s run gets 25.

The sampler measures its own cost: the CPU time of its thread, and of the
backend serving it where the server runs on this machine. In a run timed by
phase, each sample is also counted under the phase that was running.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg

from ..model.observation import SamplerCost
from ..queries import load
from ..servers import read_only
from ..servers.base import BENCH_APPLICATION, LAB_DATABASE

SAMPLES_PER_RUN = 150
MAX_RATE_HZ = 5.0
MIN_RATE_HZ = 2.0
SAMPLER_APPLICATION = "pgopt-sampler"


@dataclass(frozen=True)
class Scope:
    """Which sessions to watch: those of these databases and application names."""

    databases: tuple[str, ...]
    applications: tuple[str, ...]


LAB_SCOPE = Scope((LAB_DATABASE,), (BENCH_APPLICATION,))


def interval_for(run_s: float | None) -> float:
    """Seconds between samples for a run expected to last `run_s` (None: unknown)."""
    if not run_s or run_s <= 0:
        return 1 / MAX_RATE_HZ
    return 1 / min(MAX_RATE_HZ, max(MIN_RATE_HZ, SAMPLES_PER_RUN / run_s))


@dataclass
class _Span:
    name: str
    start: float
    end: float | None = None


class SampledServer(Protocol):
    """What the sampler needs of a server: how to connect, and (where the server runs
    on this machine) a backend's CPU time. A Target is one."""

    def conninfo(self, dbname: str | None = None) -> dict[str, Any]: ...

    def backend_cpu_s(self, pid: int) -> float | None: ...


@dataclass
class WaitSampler:
    """Context manager: samples from entry to exit on a thread of its own."""

    target: SampledServer
    scope: Scope = LAB_SCOPE
    interval_s: float = 1 / MAX_RATE_HZ
    read_only: bool = False  # a session that may not create even a temporary function
    counts: Counter[str] = field(default_factory=Counter)
    phase_counts: dict[str, Counter[str]] = field(default_factory=dict)
    cost: SamplerCost = field(default_factory=SamplerCost)
    error: str | None = None

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._spans: list[_Span] = []
        self.cost.interval_s = round(self.interval_s, 4)
        self._thread = threading.Thread(target=self._loop, name="pgopt-sampler", daemon=True)

    @property
    def samples(self) -> int:
        return self.cost.samples

    def __enter__(self) -> WaitSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def begin_phase(self, name: str) -> None:
        self._spans.append(_Span(name, time.monotonic()))

    def end_phase(self) -> None:
        if self._spans and self._spans[-1].end is None:
            self._spans[-1].end = time.monotonic()

    def _phase_at(self, t: float) -> str | None:
        for span in reversed(self._spans):
            if span.start <= t and (span.end is None or t < span.end):
                return span.name
        return None

    def _record(self, t: float, bucket: str, backends: int) -> None:
        self.counts[bucket] += backends
        phase = self._phase_at(t)
        if phase is not None:
            self.phase_counts.setdefault(phase, Counter())[bucket] += backends

    def session_params(self) -> dict[str, Any]:
        """The sampler's session: the target's (a user's own options kept), its own name,
        read-only where asked."""
        params = {**self.target.conninfo(), "application_name": SAMPLER_APPLICATION}
        return read_only.with_options(params, read_only.READ_ONLY) if self.read_only else params

    def _loop(self) -> None:
        cpu_started = time.thread_time()
        params = self.session_params()
        args = {
            "databases": list(self.scope.databases),
            "applications": list(self.scope.applications),
        }
        try:
            with psycopg.connect(**params, autocommit=True, connect_timeout=10) as conn:
                pid = conn.info.backend_pid
                backend_started = self.target.backend_cpu_s(pid)
                self._poll(conn, args)
                backend_done = self.target.backend_cpu_s(pid)
                if backend_started is not None and backend_done is not None:
                    self.cost.server_cpu_s = round(backend_done - backend_started, 4)
        except psycopg.Error as e:
            self.error = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        finally:
            self.cost.client_cpu_s = round(time.thread_time() - cpu_started, 4)

    def _poll(self, conn: psycopg.Connection[Any], args: dict[str, list[str]]) -> None:
        """One short autocommit statement per sample (a new pg_stat_activity snapshot
        each time, no snapshot held between samples)."""
        query = load("wait_sample")
        next_at = time.monotonic()
        while not self._stop.is_set():
            taken = time.monotonic()
            for bucket, backends in conn.execute(query, args, prepare=True).fetchall():
                self._record(taken, str(bucket), int(backends))
            self.cost.samples += 1
            next_at += self.interval_s
            self._stop.wait(max(0.0, next_at - time.monotonic()))
