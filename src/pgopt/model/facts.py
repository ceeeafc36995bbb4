"""What planning needs to know about the server a lab runs on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ServerFacts:
    kind: str  # "embedded" or "dsn"
    version_num: int  # e.g. 180006
    pgbench_major: int
    contexts: Mapping[str, str] = field(default_factory=dict)  # setting -> pg_settings.context
    owned: bool = True  # pgopt started it and may restart it
    allow_settings: bool = True

    @property
    def restart_only(self) -> frozenset[str]:
        """Settings the server applies only when it starts."""
        return frozenset(name for name, context in self.contexts.items() if context == "postmaster")
