"""Server settings: what a change needs (reload or restart) and whether it is allowed.

Pure functions over rows of `pg_settings`, so the rules are unit-tested
without a server; targets fetch the rows and act on the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import SettingsError

# pg_settings.context values, from least to most disruptive to change.
SESSION_CONTEXTS = frozenset({"user", "superuser"})
RELOAD_CONTEXTS = frozenset({"sighup", "backend", "superuser-backend"}) | SESSION_CONTEXTS
RESTART_CONTEXTS = frozenset({"postmaster"})


@dataclass(frozen=True)
class SettingChange:
    """One setting to set (`value`) or to reset to its default (`value is None`)."""

    name: str
    value: str | None
    context: str

    @property
    def needs_restart(self) -> bool:
        return self.context in RESTART_CONTEXTS


def normalize(settings: Mapping[str, object]) -> dict[str, str]:
    """Lower-case names and text values, as PostgreSQL takes them."""
    out: dict[str, str] = {}
    for name, value in settings.items():
        text = ("on" if value else "off") if isinstance(value, bool) else str(value)
        out[name.strip().lower()] = text
    return out


def classify_settings(
    wanted: Mapping[str, str],
    current: Mapping[str, str],
    contexts: Mapping[str, str],
) -> list[SettingChange]:
    """The changes that take the server from `current` (what pgopt set) to `wanted`.

    `contexts` maps every setting name the server knows to its pg_settings.context.
    A name the server does not know, or one that cannot be set, is an error.
    """
    changes: list[SettingChange] = []
    for name in sorted(set(wanted) | set(current)):
        context = contexts.get(name)
        if context is None:
            raise SettingsError(f"unknown setting {name!r}")
        if context == "internal":
            raise SettingsError(f"setting {name!r} is read-only (fixed when PostgreSQL was built)")
        if wanted.get(name) != current.get(name):
            changes.append(SettingChange(name, wanted.get(name), context))
    return changes


def refuse_for_attached(changes: Iterable[SettingChange], allow_settings: bool) -> None:
    """A user's server: settings only with --allow-settings, and never ones needing a restart."""
    changes = list(changes)
    if changes and not allow_settings:
        names = ", ".join(c.name for c in changes)
        raise SettingsError(
            f"this step changes server settings ({names}); pass --allow-settings to let "
            "pgopt set them on your server (it resets them afterwards)"
        )
    restart = [c.name for c in changes if c.needs_restart]
    if restart:
        raise SettingsError(
            f"setting {', '.join(restart)} needs a server restart; pgopt never restarts "
            "a server it did not start (run this step on the embedded server)"
        )


def unsupported_reason(
    wanted: Mapping[str, object], contexts: Mapping[str, str], *, owned: bool, allow_settings: bool
) -> str | None:
    """Why a step with settings `wanted` cannot run on a server (its step is skipped),
    or None; raises for settings that are errors anywhere. `owned`: a server pgopt
    started, which it may restart; otherwise a user's server, where settings need
    --allow-settings and a restart-only one skips the step."""
    changes = classify_settings(normalize(wanted), {}, contexts)
    if owned:
        return None
    restart = [c.name for c in changes if c.needs_restart]
    if restart:
        return (
            f"{', '.join(restart)} needs a restart, and pgopt never restarts a server "
            "it did not start"
        )
    refuse_for_attached(changes, allow_settings)
    return None
