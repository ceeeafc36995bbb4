"""Server settings: what a change needs (reload or restart) and whether it is allowed.

Pure functions over rows of `pg_settings`, so the rules are unit-tested
without a server; targets fetch the rows and act on the answer. On a user's
server the role decides too (SettingRights): pgopt sets a session setting on its
own database pgopt_lab (ALTER DATABASE, which its owner may, but a
superuser-context one only for a superuser or, from PostgreSQL 15, a role granted
SET on it), and a server-wide one with ALTER SYSTEM and a reload, reading
pg_file_settings to put it back: a superuser, or from PostgreSQL 15 a role granted
ALTER SYSTEM on it and EXECUTE on those functions. A managed server (RDS, Cloud
SQL, Azure) gives no role a superuser's: its settings are the provider's
parameter group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import SettingsError
from ..sqltree import quote_ident

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


GRANTS_FROM = 150000  # GRANT SET | ALTER SYSTEM ON PARAMETER: PostgreSQL 15


@dataclass(frozen=True)
class SettingRights:
    """What the role of a user's server may change, the way pgopt changes it there:
    `alter_system`, the settings it was granted ALTER SYSTEM on, `set_granted` the
    superuser-context ones it was granted SET on (both from PostgreSQL 15); whether it
    may run pg_reload_conf(), and read pg_file_settings (what puts a value back)
    (queries/setting_rights*.sql)."""

    role: str
    superuser: bool
    version_num: int
    alter_system: frozenset[str] = frozenset()
    set_granted: frozenset[str] = frozenset()
    may_reload: bool = False
    may_read_file_settings: bool = False

    def refused(self, changes: Iterable[SettingChange]) -> str | None:
        """Why this role may not make `changes` as pgopt makes them on a user's server,
        and what would let it; None: it may."""
        changes = list(changes)
        server_wide = [c.name for c in changes if c.context not in SESSION_CONTEXTS]
        privileged = [c.name for c in changes if c.context == "superuser"]
        return self._refusal(server_wide, privileged, put_back=True)

    def refused_alter_system(self, names: Iterable[str]) -> str | None:
        """Why this role may not run ALTER SYSTEM SET on `names` and reload (tune's
        script, whatever the settings' contexts); None: it may."""
        return self._refusal(list(names), [], put_back=False)

    def _refusal(
        self, server_wide: list[str], privileged: list[str], *, put_back: bool
    ) -> str | None:
        if self.superuser:
            return None
        may_alter = self.may_reload and (self.may_read_file_settings or not put_back)
        barred = sorted({n for n in server_wide if not (n in self.alter_system and may_alter)})
        unset = sorted({n for n in privileged if n not in self.set_granted})
        role = quote_ident(self.role)
        why = []
        if barred:
            names = ", ".join(barred)
            grant = (
                f"GRANT ALTER SYSTEM ON PARAMETER {names} TO {role}, and EXECUTE on "
                "pg_reload_conf()"
            )
            if put_back:
                grant += (
                    " and, to put them back, on pg_show_all_file_settings() with SELECT on "
                    "pg_file_settings"
                )
            what = names if len(barred) <= 3 else f"{len(barred)} settings"
            why.append(f"{what} server-wide (ALTER SYSTEM): {self._needs(grant)}")
        if unset:
            names = ", ".join(unset)
            grant = f"GRANT SET ON PARAMETER {names} TO {role}"
            why.append(
                f"{names}, a superuser's setting even for one database: {self._needs(grant)}"
            )
        if not why:
            return None
        return (
            f"role {role} may not set {'; nor '.join(why)} (a managed server sets them in "
            "its parameter group or flags)"
        )

    def _needs(self, grant: str) -> str:
        if self.version_num < GRANTS_FROM:
            return "that needs a superuser (before PostgreSQL 15 no role may be granted it)"
        return f"that needs a superuser, or {grant}"


def unsupported_reason(
    wanted: Mapping[str, object],
    contexts: Mapping[str, str],
    *,
    owned: bool,
    allow_settings: bool,
    rights: SettingRights | None = None,
) -> str | None:
    """Why a step with settings `wanted` cannot run on a server (its step is skipped),
    or None; raises for settings that are errors anywhere. `owned`: a server pgopt
    started, which it may restart; otherwise a user's server, where settings need
    --allow-settings, and a restart-only one, or one its role (`rights`) may not
    change, skips the step."""
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
    return rights.refused(changes) if rights is not None else None
