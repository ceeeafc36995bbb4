"""What a probe is: a timed run driven from Python, its context and what it needs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..servers.base import Target


@dataclass(frozen=True)
class ProbeContext:
    target: Target
    duration_s: float
    args: Mapping[str, Any]
    redis_url: str | None
    standbys: tuple[Target, ...] = ()  # the primary's hot standbys, in a [cluster] lab
    facts: dict[str, str] = field(default_factory=dict)  # what the probe measured besides


@dataclass(frozen=True)
class Probe:
    run: Callable[[ProbeContext], float]
    unavailable: Callable[[ProbeContext], str | None]
    needs_standby: bool = False  # only in a lab with hot standbys ([cluster])
    unit: str | None = None  # what its rate counts, when not the lab's metric's unit
    headline: tuple[str, ...] = ()  # the facts a report's summary shows beside its rate


def always_available(_ctx: ProbeContext) -> str | None:
    """For a probe that needs only the target server."""
    return None
