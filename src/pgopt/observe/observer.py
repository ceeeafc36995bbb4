"""Observe one timed run: wait-event samples plus statistics snapshots around it,
for a run timed by phase each phase's own waits and WAL, and what sampling cost."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from ..analysis.observed import delta
from ..model.observation import Observation, PhaseObservation
from ..servers.base import Target
from . import snapshots
from .sampler import LAB_SCOPE, Scope, WaitSampler, interval_for


class Observer:
    """Knows once whether pg_stat_statements is there; observes each run of the sessions
    in `scope` (pgopt's own workload by default)."""

    def __init__(
        self, target: Target, *, sample_waits: bool = True, scope: Scope = LAB_SCOPE
    ) -> None:
        self.target = target
        self.sample_waits = sample_waits
        self.scope = scope
        with target.connect() as conn:
            self.statements = snapshots.statements_available(conn)
        self._conn: psycopg.Connection[Any] | None = None
        self._sampler: WaitSampler | None = None
        self._observation: Observation | None = None

    @contextmanager
    def run(self, expected_s: float | None = None) -> Iterator[Observation]:
        """Observe one run expected to last `expected_s` seconds (None: unknown)."""
        obs = Observation()
        started = time.monotonic()
        with self.target.connect() as conn:
            self._conn, self._observation = conn, obs
            try:
                before = snapshots.take(
                    conn, statements=self.statements, databases=self.scope.databases
                )
                if self.sample_waits:
                    with WaitSampler(
                        self.target, scope=self.scope, interval_s=interval_for(expected_s)
                    ) as sampler:
                        self._sampler = sampler
                        yield obs
                    obs.waits, obs.samples = sampler.counts, sampler.samples
                    obs.sampler = sampler.cost
                    for name, counts in sampler.phase_counts.items():
                        obs.phases.setdefault(name, PhaseObservation()).waits = counts
                    if sampler.error:
                        obs.problems.append(f"wait sampler stopped: {sampler.error}")
                else:
                    yield obs
                obs.wall_s = round(time.monotonic() - started, 3)
                after = snapshots.take(
                    conn, statements=self.statements, databases=self.scope.databases
                )
            finally:
                self._conn = self._sampler = self._observation = None
        obs.stats = delta(before, after)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Within `run`: count the waits sampled and the WAL written meanwhile as `name`'s."""
        if self._conn is None or self._observation is None:
            raise RuntimeError("Observer.phase is only valid inside Observer.run")
        conn, obs, sampler = self._conn, self._observation, self._sampler
        start = snapshots.wal_position(conn)
        if sampler is not None:
            sampler.begin_phase(name)
        try:
            yield
        finally:
            if sampler is not None:
                sampler.end_phase()
        phase = obs.phases.setdefault(name, PhaseObservation())
        phase.wal_bytes = snapshots.wal_position(conn) - start
