"""The servers of a run: the lab's one, or, in an A/B across servers (two
PostgreSQL versions, lab/across.py), each step's own by its `server` name.

Each server is started once for the whole run (running/session.py); the engine asks
here which one a step runs on and makes it the one it talks to. Every step's
pgbench is the newest version's, whichever server it runs on: the load engine
stays the same on both sides (psql and pg_restore are each server's own). Before the first run, the
servers' settings are compared: those only one version has, and the defaults that
changed between them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..binaries import PgBinaries
from ..lab.across import settings_across
from ..lab.spec import Step
from ..servers.base import Target
from ..servers.facts import ServerFacts, both

# every setting's built-in default, but those fixed at build time (server_version, ...)
SETTINGS_SQL = "select name, boot_val, unit from pg_settings where context <> 'internal'"


class Servers:
    def __init__(self, main: Target, named: Mapping[str, Target] | None = None) -> None:
        self.main = main
        self.named = dict(named or {})

    @property
    def across(self) -> bool:
        return bool(self.named)

    def of(self, step: Step) -> Target:
        """The server `step` runs on: its own across servers, else the lab's."""
        return self.named[step.server] if step.server is not None else self.main

    def groups(self, steps: list[Step]) -> list[list[Step]]:
        """`steps` grouped by the server they run on, in the order they first come."""
        out: dict[str | None, list[Step]] = {}
        for step in steps:
            out.setdefault(step.server, []).append(step)
        return list(out.values())

    def clients(self) -> PgBinaries | None:
        """The pgbench of every step across servers: the newest version's."""
        if not self.named:
            return None
        return max(self.named.values(), key=lambda t: t.binaries.major).binaries

    def facts(self) -> ServerFacts:
        """What the plan is drawn from: the lab's server's facts, or both servers'."""
        if not self.named:
            return self.main.facts()
        return both(self.named["a"].facts(), self.named["b"].facts())

    def describe(self) -> dict[str, Any]:
        return {name: t.describe() for name, t in self.named.items()}

    def compare_settings(self) -> dict[str, Any]:
        """What differs between the two servers' settings (lab/across.py)."""
        boot = {}
        for name, server in self.named.items():
            with server.connect(server.admin_database) as conn:
                rows = conn.execute(SETTINGS_SQL).fetchall()
            boot[name] = {str(n): (str(v or ""), str(u or "")) for n, v, u in rows}
        a, b = self.named["a"], self.named["b"]
        return settings_across(boot["a"], boot["b"], (a.server_version, b.server_version))
