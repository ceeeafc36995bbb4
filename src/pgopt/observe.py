"""Observe one timed run: wait-event samples plus statistics snapshots around it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from . import snapshots
from .sampler import WaitSampler
from .target.base import Target


@dataclass
class Observation:
    """What the server did during one run."""

    waits: Counter[str] = field(default_factory=Counter)
    samples: int = 0
    stats: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


class Observer:
    """Knows once whether pg_stat_statements is there; observes each run."""

    def __init__(self, target: Target, *, sample_waits: bool = True) -> None:
        self.target = target
        self.sample_waits = sample_waits
        with target.connect() as conn:
            self.statements = snapshots.statements_available(conn)

    @contextmanager
    def run(self) -> Iterator[Observation]:
        obs = Observation()
        with self.target.connect() as conn:
            before = snapshots.take(conn, statements=self.statements)
            if self.sample_waits:
                with WaitSampler(self.target) as sampler:
                    yield obs
                obs.waits, obs.samples = sampler.counts, sampler.samples
                if sampler.error:
                    obs.problems.append(f"wait sampler stopped: {sampler.error}")
            else:
                yield obs
            after = snapshots.take(conn, statements=self.statements)
        obs.stats = snapshots.delta(before, after)
