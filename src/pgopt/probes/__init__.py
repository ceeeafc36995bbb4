"""Probes: timed runs measured from Python instead of pgbench.

A lab step with `probe = "NAME"` (and optional `probe_args`) is timed by the probe
of that name: it runs for the step's duration and returns units per second; what
else it measured it leaves in the context's `facts`, which become the run's. Used
where the article compared PostgreSQL with a client of another system (Redis), so
both are driven by the same kind of client, and where pgbench cannot send the
workload (COPY data). A probe that cannot run here (no Redis reachable) says why,
and its step is skipped. Each probe declares the `probe_args` it takes (`Arg`s:
their types, defaults, bounds), and a step's are checked against them when the lab
loads: a misspelt key or a string where a number belongs is the lab's error.
"""

from __future__ import annotations

from ..errors import LabError
from .base import Probe, read_args

__all__ = ["Probe", "get", "read_args", "registry"]


def registry() -> dict[str, Probe]:
    from . import counters, ingest, replication

    return {**counters.PROBES, **ingest.PROBES, **replication.PROBES}


def get(name: str) -> Probe:
    probes = registry()
    if name not in probes:
        raise LabError(f"unknown probe {name!r} (known: {', '.join(sorted(probes))})")
    return probes[name]
