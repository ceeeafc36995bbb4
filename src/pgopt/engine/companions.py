"""The servers a lab runs beside its primary: pgbouncer
for pooled steps, hot standbys, shard servers; and why a step cannot run where one
of them cannot be had."""

from __future__ import annotations

from contextlib import AbstractContextManager

from ..lab.spec import Lab, Step
from ..params import RunParams
from ..servers import pooler, shards, standby
from ..servers.base import Target
from ..servers.embedded import EmbeddedTarget
from .display import Display


def unavailable(lab: Lab, params: RunParams, target: Target, step: Step) -> str | None:
    """Why `step` cannot run on `target` for want of a server beside it, or None."""
    reason = None
    if step.pooler is not None:
        reason = pooler.unavailable(target) or reason
    if lab.standbys and (found := standby.unavailable(target, params.standby_dsns)):
        reason = found
    elif step.standby_settings and params.standby_dsns:
        reason = standby.NO_SETTINGS
    if lab.shards:
        reason = shards.unavailable(target) or reason
    return reason


def pooler_for(target: Target, params: RunParams, display: Display) -> pooler.Pgbouncer:
    """pgbouncer for the pooled steps (the plan left them out where it cannot run),
    with the checklist's "active sessions = 2 x cores" server connections."""
    assert isinstance(target, EmbeddedTarget)
    display.message(f"starting pgbouncer: {2 * params.cpus} server connections")
    return pooler.Pgbouncer(target, pool_size=2 * params.cpus)


def standbys_for(
    lab: Lab, params: RunParams, target: Target, display: Display
) -> AbstractContextManager[tuple[Target, ...]]:
    """The lab's hot standbys, made after the dataset so they start with it."""
    count = len(params.standby_dsns) or lab.standbys
    display.message(f"starting {count} hot standby(s) of the primary")
    return standby.standbys_of(target, lab.standbys, params.standby_dsns, display.message)


def shards_for(
    lab: Lab, target: Target, variables: dict[str, str], display: Display
) -> AbstractContextManager[tuple[EmbeddedTarget, ...]]:
    """The lab's shard servers, set up and known to this server as foreign servers."""
    assert isinstance(target, EmbeddedTarget)
    display.message(f"starting {lab.shards} shard server(s)")
    return shards.shards_of(target, lab.shards, lab.shard_setup, variables, display.message)
