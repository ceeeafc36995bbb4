"""A server the user already runs, reached with `--dsn`, left as it was found.

pgopt works only inside its own database `pgopt_lab`, created at the start and
dropped at the end. Settings change only with `--allow-settings`: per-session
ones on `pgopt_lab` alone (ALTER DATABASE), reloadable server-wide ones with
ALTER SYSTEM, each restored to its previous postgresql.auto.conf value at the
end. Settings that need a restart are refused, and so are those the role may not
change (`setting_rights`: on a managed server, every server-wide one), before any
run. The role needs CREATEDB; without it, one line says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import Any

import psycopg
from psycopg import sql

from ..binaries import PgBinaries
from ..errors import SettingsError, TargetError, first_line
from ..queries import load
from ..sqltree import quote_ident
from . import databases
from .base import LAB_COMMENT, LAB_DATABASE, Target
from .dsn import accept
from .embedded import reload_and_wait
from .facts import ServerFacts
from .read_only import READ_ONLY, with_options
from .settings import SESSION_CONTEXTS, SettingChange, SettingRights, refuse_for_attached


def setting_rights(conn: psycopg.Connection[Any]) -> SettingRights:
    """What the session's role may change on its server, as pgopt changes settings."""
    row = conn.execute(load("setting_rights", conn.info.server_version)).fetchone()
    assert row is not None
    role, superuser, version_num, alter_system, set_granted, may_reload, may_read = row
    return SettingRights(
        str(role),
        bool(superuser),
        int(version_num),
        frozenset(alter_system),
        frozenset(set_granted),
        bool(may_reload),
        bool(may_read),
    )


class AttachedTarget(Target):
    """A user's server; a context manager that cleans up after itself."""

    kind = "dsn"

    def __init__(
        self,
        binaries: PgBinaries,
        dsn: str,
        *,
        allow_settings: bool = False,
        keep: bool = False,
        say: Callable[[str], None] = lambda _msg: None,
    ) -> None:
        super().__init__()
        binaries.require("pgbench", "psql")
        self.binaries = binaries
        self.allow_settings = allow_settings
        self.keep = keep
        self.say = say
        self._params: dict[str, Any] = accept(dsn, "--dsn")
        self.admin_database = str(self._params.get("dbname") or "postgres")
        self._system_originals: dict[str, str | None] = {}
        self._created = False
        self._checkpoint_refused = False
        self._rights: SettingRights | None = None

    def conninfo(self, dbname: str | None = None) -> dict[str, Any]:
        params = dict(self._params)
        params["dbname"] = dbname or LAB_DATABASE
        return params

    def __enter__(self) -> AttachedTarget:
        try:
            admin = self.connect(self.admin_database)
        except TargetError as e:
            raise TargetError(f"cannot reach the server of --dsn: {e}") from None
        with admin:
            self._read_version(admin)
            self._rights = setting_rights(admin)
            self._create_lab_database(admin)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self._clean_up()
        except psycopg.Error as e:
            raise TargetError(
                f"could not reset what pgopt set on the server: {first_line(e)}"
            ) from e

    def _clean_up(self) -> None:
        """Reset the settings pgopt changed; drop pgopt_lab (or keep it with --keep)."""
        with self.connect(self.admin_database) as admin:
            self._restore_system_settings(admin)
            for name in databases.leftovers(admin):  # a run stopped before it dropped them
                databases.drop(admin, name)
            if not self._created:
                return
            if self.keep:
                admin.execute(
                    sql.SQL("alter database {} reset all").format(sql.Identifier(LAB_DATABASE))
                )
                self.say(f"database {LAB_DATABASE} kept on {self.display_dsn()}")
            else:
                self._drop_lab_database(admin)

    def _create_lab_database(self, admin: psycopg.Connection[Any]) -> None:
        row = admin.execute(
            "select shobj_description(oid, 'pg_database') from pg_database where datname = %s",
            [LAB_DATABASE],
        ).fetchone()
        if row is not None:
            if row[0] != LAB_COMMENT:
                raise TargetError(
                    f"database {LAB_DATABASE} exists on this server and was not made by "
                    "pgopt; pgopt will not touch it"
                )
            self._drop_left(admin, LAB_DATABASE)
        for name in databases.leftovers(admin):
            self._drop_left(admin, name)
        try:
            databases.create(admin)
        except psycopg.errors.InsufficientPrivilege as e:
            role = quote_ident(admin.info.user)
            raise TargetError(
                f"cannot create database {LAB_DATABASE} ({first_line(e)}): pgopt works in a "
                f"database of its own, and role {role} has no CREATEDB (ALTER ROLE {role} "
                "CREATEDB, as a role that may grant it)"
            ) from e
        except psycopg.Error as e:
            raise TargetError(f"cannot create database {LAB_DATABASE}: {e}") from e
        self._created = True

    def _drop_left(self, admin: psycopg.Connection[Any], name: str) -> None:
        """Drop a database an earlier run left; one another role owns is said so."""
        self.say(f"dropping {name} left by an earlier pgopt run")
        try:
            databases.drop(admin, name)
        except psycopg.errors.InsufficientPrivilege as e:
            raise TargetError(
                f"database {name}, left by an earlier pgopt run, cannot be dropped as role "
                f"{quote_ident(admin.info.user)} ({first_line(e)}): drop it as its owner"
            ) from e

    def _drop_lab_database(self, admin: psycopg.Connection[Any]) -> None:
        databases.drop(admin)
        self._created = False

    def lab_database_replaced(self) -> None:
        """Settings pgopt keeps on pgopt_lab (ALTER DATABASE) do not come with a clone,
        and a template renamed in carries those of its last turn: reset, to be applied
        again."""
        with self.connect(self.admin_database) as admin:
            admin.execute(
                sql.SQL("alter database {} reset all").format(sql.Identifier(LAB_DATABASE))
            )
        contexts = self.setting_contexts()
        self._applied = {
            name: value
            for name, value in self._applied.items()
            if contexts.get(name) not in SESSION_CONTEXTS
        }

    def peek(self) -> ServerFacts:
        """The server's facts, read in a read-only session of the database the DSN names,
        without creating anything: what a dry run needs."""
        params = with_options(self._params, READ_ONLY)
        try:
            with psycopg.connect(**params, autocommit=True, connect_timeout=10) as conn:
                self._read_version(conn)
                rows = conn.execute(load("setting_contexts")).fetchall()
                self._rights = setting_rights(conn)
        except psycopg.Error as e:
            raise TargetError(f"cannot reach the server of --dsn: {first_line(e)}") from e
        self._contexts = {str(name): str(context) for name, context in rows}
        return self.facts()

    def facts(self) -> ServerFacts:
        return replace(super().facts(), rights=self._rights)

    def settle(self) -> None:
        """A CHECKPOINT before every timed run, only with --allow-settings (it makes the
        server write its dirty buffers now) and where the role may (superuser, or
        pg_checkpoint from PostgreSQL 15); said once where it may not."""
        if not self.allow_settings or self._checkpoint_refused:
            return
        try:
            with self.connect() as conn:
                conn.execute("checkpoint")
        except (psycopg.Error, TargetError) as e:
            self._checkpoint_refused = True
            self.say(f"no CHECKPOINT before each run ({first_line(e)}): runs start as they come")

    # -- settings ----------------------------------------------------------

    def _apply(self, changes: list[SettingChange]) -> None:
        refuse_for_attached(changes, self.allow_settings)
        system = [c for c in changes if c.context not in SESSION_CONTEXTS]
        with self.connect(self.admin_database) as admin:
            for change in changes:
                try:
                    if change.context in SESSION_CONTEXTS:
                        stmt = self._database_setting(change)
                    else:
                        self._remember_original(admin, change.name)
                        stmt = self._system_setting(change.name, change.value)
                    admin.execute(stmt)
                except psycopg.Error as e:
                    raise SettingsError(
                        f"setting {change.name} = {change.value!r}: {str(e).strip()}"
                    ) from e
        if system:  # in the database of --dsn, where its role's rights were read
            reload_and_wait(self, self.admin_database)

    @staticmethod
    def _database_setting(change: SettingChange) -> sql.Composed:
        db, name = sql.Identifier(LAB_DATABASE), sql.Identifier(change.name)
        if change.value is None:
            return sql.SQL("alter database {} reset {}").format(db, name)
        return sql.SQL("alter database {} set {} = {}").format(db, name, sql.Literal(change.value))

    @staticmethod
    def _system_setting(name: str, value: str | None) -> sql.Composed:
        if value is None:
            return sql.SQL("alter system reset {}").format(sql.Identifier(name))
        return sql.SQL("alter system set {} = {}").format(sql.Identifier(name), sql.Literal(value))

    def _remember_original(self, admin: psycopg.Connection[Any], name: str) -> None:
        """The value postgresql.auto.conf held before pgopt touched `name`, if any."""
        if name in self._system_originals:
            return
        row = admin.execute(
            "select setting from pg_file_settings where name = %s "
            "and sourcefile like '%%postgresql.auto.conf' order by seqno desc limit 1",
            [name],
        ).fetchone()
        self._system_originals[name] = None if row is None else str(row[0])

    def _restore_system_settings(self, admin: psycopg.Connection[Any]) -> None:
        if not self._system_originals:
            return
        for name, original in self._system_originals.items():
            admin.execute(self._system_setting(name, original))
        self._system_originals.clear()
        self._applied = {}
        admin.execute("select pg_reload_conf()")
