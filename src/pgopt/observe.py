"""Observe one timed run: wait-event samples plus statistics snapshots around it,
and for a run timed by phase, each phase's own waits and WAL."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg

from . import snapshots
from .sampler import WaitSampler
from .target.base import Target


@dataclass
class PhaseObservation:
    """What the server did during one phase of a run."""

    waits: Counter[str] = field(default_factory=Counter)
    wal_bytes: int = 0


@dataclass
class Observation:
    """What the server did during one run."""

    waits: Counter[str] = field(default_factory=Counter)
    samples: int = 0
    stats: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    phases: dict[str, PhaseObservation] = field(default_factory=dict)


class Observer:
    """Knows once whether pg_stat_statements is there; observes each run."""

    def __init__(self, target: Target, *, sample_waits: bool = True) -> None:
        self.target = target
        self.sample_waits = sample_waits
        with target.connect() as conn:
            self.statements = snapshots.statements_available(conn)
        self._conn: psycopg.Connection[Any] | None = None
        self._sampler: WaitSampler | None = None
        self._observation: Observation | None = None

    @contextmanager
    def run(self) -> Iterator[Observation]:
        obs = Observation()
        with self.target.connect() as conn:
            self._conn, self._observation = conn, obs
            try:
                before = snapshots.take(conn, statements=self.statements)
                if self.sample_waits:
                    with WaitSampler(self.target) as sampler:
                        self._sampler = sampler
                        yield obs
                    obs.waits, obs.samples = sampler.counts, sampler.samples
                    for name, counts in sampler.phase_counts.items():
                        obs.phases.setdefault(name, PhaseObservation()).waits = counts
                    if sampler.error:
                        obs.problems.append(f"wait sampler stopped: {sampler.error}")
                else:
                    yield obs
                after = snapshots.take(conn, statements=self.statements)
            finally:
                self._conn = self._sampler = self._observation = None
        obs.stats = snapshots.delta(before, after)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Within `run`: count the waits sampled and the WAL written meanwhile as `name`'s."""
        if self._conn is None or self._observation is None:
            raise RuntimeError("Observer.phase is only valid inside Observer.run")
        conn, obs, sampler = self._conn, self._observation, self._sampler
        start = snapshots.wal_position(conn)
        if sampler is not None:
            sampler.phase = name
        try:
            yield
        finally:
            if sampler is not None:
                sampler.phase = None
        phase = obs.phases.setdefault(name, PhaseObservation())
        phase.wal_bytes = snapshots.wal_position(conn) - start
