"""What every target offers the engine: connections, client environment, settings."""

from __future__ import annotations

import abc
import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from ..binaries import PgBinaries
from ..errors import TargetError, first_line
from ..queries import load
from .facts import ServerFacts
from .settings import SettingChange, classify_settings, normalize

LAB_DATABASE = "pgopt_lab"
LAB_COMMENT = "pgopt lab database: safe to drop"
BENCH_APPLICATION = "pgopt"  # the application_name of the sessions a lab measures

# libpq connection parameters and the environment variables that carry them.
LIBPQ_ENV = {
    "host": "PGHOST",
    "hostaddr": "PGHOSTADDR",
    "port": "PGPORT",
    "dbname": "PGDATABASE",
    "user": "PGUSER",
    "password": "PGPASSWORD",
    "passfile": "PGPASSFILE",
    "options": "PGOPTIONS",
    "application_name": "PGAPPNAME",
    "connect_timeout": "PGCONNECT_TIMEOUT",
    "sslmode": "PGSSLMODE",
    "sslcert": "PGSSLCERT",
    "sslkey": "PGSSLKEY",
    "sslrootcert": "PGSSLROOTCERT",
    "sslcrl": "PGSSLCRL",
    "sslcompression": "PGSSLCOMPRESSION",
    "channel_binding": "PGCHANNELBINDING",
    "gssencmode": "PGGSSENCMODE",
    "requirepeer": "PGREQUIREPEER",
    "krbsrvname": "PGKRBSRVNAME",
    "target_session_attrs": "PGTARGETSESSIONATTRS",
    "service": "PGSERVICE",
    "client_encoding": "PGCLIENTENCODING",
    "sslnegotiation": "PGSSLNEGOTIATION",
}


class Target(abc.ABC):
    """A PostgreSQL server a lab runs on, used as a context manager."""

    kind: str
    binaries: PgBinaries
    admin_database = "postgres"  # where pgopt creates, renames and drops its databases

    def __init__(self) -> None:
        self._applied: dict[str, str] = {}
        self._contexts: dict[str, str] | None = None
        self.server_version = ""
        self.server_version_num = 0

    # -- connections -------------------------------------------------------

    @abc.abstractmethod
    def conninfo(self, dbname: str | None = None) -> dict[str, Any]:
        """Connection parameters (password included) for the lab database or `dbname`."""

    def connect(
        self, dbname: str | None = None, *, autocommit: bool = True
    ) -> psycopg.Connection[Any]:
        params = self.conninfo(dbname)
        try:
            return psycopg.connect(**params, autocommit=autocommit, connect_timeout=10)
        except psycopg.Error as e:
            raise TargetError(f"cannot connect to {self.display_dsn()}: {first_line(e)}") from e

    def client_env(self) -> dict[str, str]:
        """Environment for pgbench and psql: the connection as libpq variables, so the
        password never appears on a command line (where `ps` would show it)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        for key, value in self.conninfo().items():
            var = LIBPQ_ENV.get(key)
            if var is None:
                raise TargetError(f"connection parameter {key!r} is not supported by pgopt")
            env[var] = str(value)
        env.setdefault("PGAPPNAME", "pgopt")
        return env

    def display_dsn(self) -> str:
        params = {k: v for k, v in self.conninfo().items() if k != "password"}
        return make_conninfo(**{k: str(v) for k, v in params.items()})

    def filesystem(self) -> str | None:
        """The type of the filesystem the server's data is on; None where pgopt cannot
        see it (a server on another machine)."""
        return None

    def lab_database_replaced(self) -> None:  # noqa: B027 - only --dsn keeps per-database settings
        """The lab database was dropped and made again (or renamed in): settings kept
        on the database itself are to be applied again."""

    def settle(self) -> None:  # noqa: B027 - a no-op unless the target owns the server
        """Before every timed run, whatever the step: a CHECKPOINT, so that no run starts
        with another run's dirty buffers to write. Only where pgopt owns the server."""

    def server_cpu_s(self) -> float | None:
        """CPU seconds the server's processes have used so far, or None where pgopt
        cannot read them (a server on another machine)."""
        return None

    def backend_cpu_s(self, pid: int) -> float | None:
        """CPU seconds one backend of the server has used, or None where pgopt cannot
        read them."""
        return None

    def restart_for_run(self) -> bool:
        """Restart the server so a run starts from a fresh postmaster; False where
        pgopt may not (a server it did not start)."""
        return False

    # -- settings ----------------------------------------------------------

    def setting_contexts(self) -> dict[str, str]:
        if self._contexts is None:
            with self.connect() as conn:
                rows = conn.execute(load("setting_contexts")).fetchall()
            self._contexts = {name: context for name, context in rows}
        return self._contexts

    def plan_settings(self, wanted: Mapping[str, object]) -> list[SettingChange]:
        return classify_settings(normalize(wanted), self._applied, self.setting_contexts())

    def facts(self) -> ServerFacts:
        """What planning needs to know about this server."""
        return ServerFacts(
            kind=self.kind,
            version_num=self.server_version_num,
            pgbench_major=self.binaries.major,
            contexts=self.setting_contexts(),
            owned=self.kind == "embedded",
            allow_settings=getattr(self, "allow_settings", True),
        )

    def apply_settings(self, wanted: Mapping[str, object]) -> list[SettingChange]:
        """Make the server run with exactly `wanted` on top of its own configuration."""
        changes = self.plan_settings(wanted)
        if changes:
            self._apply(changes)
            self._applied = normalize(wanted)
        return changes

    @abc.abstractmethod
    def _apply(self, changes: list[SettingChange]) -> None:
        """Carry out `changes` (already validated by name)."""

    def non_default_settings(self) -> dict[str, str]:
        """Settings that differ from the built-in defaults, for the report's environment."""
        with self.connect() as conn:
            rows = conn.execute(load("non_default_settings")).fetchall()
        return dict(rows)

    # -- lifecycle ---------------------------------------------------------

    def _read_version(self, conn: psycopg.Connection[Any]) -> None:
        row = conn.execute("show server_version").fetchone()
        assert row is not None
        self.server_version = str(row[0]).split()[0]
        self.server_version_num = conn.info.server_version

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "server_version": self.server_version,
            "pg_bin": str(self.binaries.bindir),
            "client_version": self.binaries.version,
            "dsn": self.display_dsn(),
        }

    @abc.abstractmethod
    def __enter__(self) -> Target: ...

    @abc.abstractmethod
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
