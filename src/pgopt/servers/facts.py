"""What planning needs to know about the server a lab runs on (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .settings import SettingRights


@dataclass(frozen=True)
class ServerFacts:
    kind: str  # "embedded" or "dsn"
    version_num: int  # e.g. 180006
    pgbench_major: int
    contexts: Mapping[str, str] = field(default_factory=dict)  # setting -> pg_settings.context
    owned: bool = True  # pgopt started it and may restart it
    allow_settings: bool = True
    rights: SettingRights | None = None  # what its role may change; None: anything

    @property
    def restart_only(self) -> frozenset[str]:
        """Settings the server applies only when it starts."""
        return frozenset(name for name, context in self.contexts.items() if context == "postmaster")


def both(a: ServerFacts, b: ServerFacts) -> ServerFacts:
    """The facts a plan across two servers is drawn from: `a`'s, with every setting
    either knows (lab/across.py has checked each step's against its own server's),
    and the older pgbench."""
    contexts = {**b.contexts, **a.contexts}
    return ServerFacts(
        kind=a.kind,
        version_num=min(a.version_num, b.version_num),
        pgbench_major=max(a.pgbench_major, b.pgbench_major),
        contexts=contexts,
        owned=a.owned and b.owned,
        allow_settings=a.allow_settings and b.allow_settings,
        rights=a.rights or b.rights,
    )
