"""What the observer saw during one run: wait samples, statistics, each phase's share,
and what observing cost."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SamplerCost:
    """What sampling cost during one run."""

    samples: int = 0
    client_cpu_s: float = 0.0
    server_cpu_s: float | None = None  # the serving backend's, where /proc can tell
    interval_s: float = 0.0  # between samples


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
    sampler: SamplerCost | None = None
    wall_s: float = 0.0
