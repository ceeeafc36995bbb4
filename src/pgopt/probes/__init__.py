"""Probes: timed runs measured from Python instead of pgbench.

A lab step with `probe = "NAME"` (and optional `probe_args`) is timed by the probe
of that name: it runs for the step's duration and returns units per second; what
else it measured it leaves in the context's `facts`, which become the run's. Used
where the article compared PostgreSQL with a client of another system (Redis), so
both are driven by the same kind of client, and where pgbench cannot send the
workload (COPY data). A probe that cannot run here (no Redis reachable) says why,
and its step is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import LabError
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


def registry() -> dict[str, Probe]:
    from . import counters, ingest, replication

    return {**counters.PROBES, **ingest.PROBES, **replication.PROBES}


def get(name: str) -> Probe:
    probes = registry()
    if name not in probes:
        raise LabError(f"unknown probe {name!r} (known: {', '.join(sorted(probes))})")
    return probes[name]
