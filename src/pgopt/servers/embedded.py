"""A throwaway PostgreSQL server that pgopt starts, configures, stops and removes.

The server lives in a fresh folder (`data/`, `sock/`, `server.log`) under a
work folder on a real disk (fsync cost is part of what the labs measure).
It is stopped and its folder removed on every way out: normal exit, errors,
Ctrl-C and SIGTERM (the CLI turns that into an exception). A folder left by a
pgopt that was killed outright is reaped by the next run.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import psycopg
from psycopg import sql

from .. import stopping
from ..binaries import PgBinaries
from ..errors import BinariesError, SettingsError, TargetError, first_line
from ..machine import filesystem_type
from ..processes import stop
from . import databases
from .base import LAB_DATABASE, Target
from .cpu import process_cpu_s, tree_cpu_s
from .reaping import OWNER_FILE, PREFIX, reap_stale
from .runas import ServerUser, can_enter, reachable_binaries, server_user
from .settings import SettingChange

SUPERUSER = "postgres"
START_TIMEOUT_S = 60.0
PORT_ATTEMPTS = 5  # starts on another port when the one chosen was taken meanwhile
STOP_TIMEOUT_S = 60.0
SERVER_ESCALATION = (
    (signal.SIGINT, STOP_TIMEOUT_S),
    (signal.SIGQUIT, 10.0),
    (signal.SIGKILL, 10.0),
)


def default_workdir_base() -> Path:
    """/var/tmp: on disk on most systems, unlike a tmpfs /tmp."""
    for candidate in (os.environ.get("PGOPT_WORKDIR"), "/var/tmp", tempfile.gettempdir()):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK):
            return Path(candidate)
    return Path(tempfile.gettempdir())


class EmbeddedTarget(Target):
    """initdb + postgres in a private folder; a context manager."""

    kind = "embedded"

    def __init__(
        self,
        binaries: PgBinaries,
        *,
        workdir: Path | None = None,
        keep: bool = False,
        say: Callable[[str], None] = lambda _msg: None,
        base_settings: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        binaries.require("initdb", "postgres", "pgbench", "psql")
        self.binaries = binaries
        self.workdir_base = workdir or default_workdir_base()
        self.keep = keep
        self.say = say
        self.base_settings = base_settings or {}
        self.superuser = SUPERUSER
        self.user: ServerUser | None = None
        self.root: Path | None = None
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    # -- paths --------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        assert self.root is not None
        return self.root / "sock"

    @property
    def log_file(self) -> Path:
        assert self.root is not None
        return self.root / "server.log"

    def conninfo(self, dbname: str | None = None) -> dict[str, Any]:
        return {
            "host": str(self.socket_dir),
            "port": self.port,
            "user": self.superuser,
            "dbname": dbname or LAB_DATABASE,
        }

    def filesystem(self) -> str | None:
        return filesystem_type(self.workdir_base)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["workdir"] = str(self.root)
        info["filesystem"] = filesystem_type(self.workdir_base)
        return info

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self) -> EmbeddedTarget:
        if not self.workdir_base.is_dir():
            raise TargetError(f"work folder {self.workdir_base} does not exist")
        reap_stale(self.workdir_base)
        try:
            self.user = server_user()
            if self.user is not None:
                if not can_enter(self.workdir_base, self.user):
                    raise TargetError(
                        f"work folder {self.workdir_base} is not reachable by the server "
                        f"user {self.user.name!r}; choose a --workdir it can enter"
                    )
                self.binaries = reachable_binaries(self.binaries, self.user)
            self.root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=self.workdir_base))
            (self.root / OWNER_FILE).write_text(f"{os.getpid()}\n")
            self.socket_dir.mkdir()
            if self.user is not None:
                os.chmod(self.root, 0o755)
                self.user.chown_tree(self.root)
            self._make_data_dir()
            self._write_base_config()
            self._start_on_a_free_port()
            with self.connect(self.admin_database) as conn:
                self._read_version(conn)
                self._after_start(conn)
        except psycopg.Error as e:
            self._teardown()
            raise TargetError(f"cannot prepare the embedded server: {first_line(e)}") from e
        except BaseException:
            self._teardown()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        interrupted = exc_type is not None and not issubclass(exc_type, Exception)
        if self.keep and not interrupted and self._proc is not None:
            self._leave_running()
            return
        self._teardown()

    def _leave_running(self) -> None:
        assert self.root is not None
        (self.root / OWNER_FILE).unlink(missing_ok=True)
        ctl = f"{self.binaries.path('pg_ctl')} -D {self.data_dir} stop"
        if self.user is not None:
            ctl = f"runuser -u {self.user.name} -- {ctl}"
        self.say(
            f'server kept running: psql "host={self.socket_dir} port={self.port} '
            f'user={self.superuser} dbname={LAB_DATABASE}"\n'
            f"stop it with: {ctl} && rm -rf {self.root}"
        )

    def _teardown(self) -> None:
        try:
            self._stop()
        finally:
            if self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)
                self.root = None

    # -- server processes --------------------------------------------------

    def _run_as_server(self, args: list[str], what: str) -> None:
        kwargs = self.user.popen_kwargs() if self.user is not None else {}
        try:
            result = subprocess.run(
                args,
                capture_output=True,
                text=True,
                check=False,
                cwd=self.root,
                start_new_session=True,
                **kwargs,
            )
        except OSError as e:
            raise BinariesError(f"cannot run {args[0]}: {e}") from e
        if result.returncode != 0:
            tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-5:])
            raise TargetError(f"{what} failed: {tail}")

    def _after_start(self, conn: psycopg.Connection[Any]) -> None:
        """The lab database, made once the server accepts connections."""
        databases.create(conn)

    def _make_data_dir(self) -> None:
        self.say(f"initdb PostgreSQL {self.binaries.version} in {self.root}")
        self._run_as_server(
            [
                str(self.binaries.path("initdb")),
                "-D",
                str(self.data_dir),
                "-U",
                SUPERUSER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
            "initdb",
        )

    def _write_base_config(self) -> None:
        self.port = free_port()
        lines = [
            "# written by pgopt",
            "listen_addresses = '127.0.0.1'",
            f"port = {self.port}",
            f"unix_socket_directories = '{self.socket_dir}'",
            "logging_collector = off",
        ]
        if self.binaries.has_extension_library("pg_stat_statements"):
            lines.append("shared_preload_libraries = 'pg_stat_statements'")
            lines.append("pg_stat_statements.track = 'top'")
        for name, value in self.base_settings.items():
            lines.append(f"{name} = '{value}'")
        with open(self.data_dir / "postgresql.conf", "a") as conf:
            conf.write("\n" + "\n".join(lines) + "\n")

    def _start_on_a_free_port(self) -> None:
        """Start; when another process took the port between its choice and the bind
        (two pgopt runs at once, a test suite's workers), start again on another."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                self._start()
                return
            except PortTaken:
                if attempt == PORT_ATTEMPTS:
                    raise
                self.port = free_port()
                with open(self.data_dir / "postgresql.conf", "a") as conf:
                    conf.write(f"port = {self.port}  # the port chosen first was taken\n")

    def _start(self) -> None:
        kwargs = self.user.popen_kwargs() if self.user is not None else {}
        log = open(self.log_file, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            with stopping.held():  # a Ctrl-C waits until the postmaster is held, to be stopped
                self._proc = subprocess.Popen(
                    [str(self.binaries.path("postgres")), "-D", str(self.data_dir)],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=self.root,
                    start_new_session=True,
                    **kwargs,
                )
        except OSError as e:
            raise BinariesError(f"cannot run postgres: {e}") from e
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._proc.poll() is not None:
                self._proc = None
                tail = self.log_tail()
                if "could not bind" in tail or "already in use" in tail:
                    raise PortTaken(f"port {self.port} was taken:\n{tail}")
                raise TargetError("PostgreSQL did not start:\n" + tail)
            try:
                with psycopg.connect(**self.conninfo(self.admin_database), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    self._stop()
                    raise TargetError(
                        f"PostgreSQL did not accept connections in {START_TIMEOUT_S:.0f}s:\n"
                        + self.log_tail()
                    ) from None
                time.sleep(0.1)

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        # SIGINT: fast shutdown; SIGQUIT: immediate shutdown; SIGKILL: last resort
        stop(proc, SERVER_ESCALATION)

    def restart(self) -> None:
        self._stop()
        self._start()

    def restart_for_run(self) -> bool:
        self.restart()
        return True

    def settle(self) -> None:
        with self.connect() as conn:
            conn.execute("checkpoint")

    def backend_cpu_s(self, pid: int) -> float | None:
        return process_cpu_s(pid)

    def server_cpu_s(self) -> float | None:
        return tree_cpu_s(self._proc.pid) if self._proc is not None else None

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.strip().splitlines()[-lines:])

    # -- settings ----------------------------------------------------------

    def _apply(self, changes: list[SettingChange]) -> None:
        with self.connect() as conn:
            for change in changes:
                if change.value is None:
                    stmt = sql.SQL("alter system reset {}").format(sql.Identifier(change.name))
                else:
                    stmt = sql.SQL("alter system set {} = {}").format(
                        sql.Identifier(change.name), sql.Literal(change.value)
                    )
                try:
                    conn.execute(stmt)
                except psycopg.Error as e:
                    raise SettingsError(
                        f"setting {change.name} = {change.value!r}: {str(e).strip()}"
                    ) from e
        if any(c.needs_restart for c in changes):
            self.restart()
        else:
            reload_and_wait(self)


def reload_and_wait(target: Target, dbname: str | None = None, timeout: float = 10.0) -> None:
    """pg_reload_conf() is asynchronous: wait until new sessions see the new file (read
    in `dbname`, the lab database by default: where the role may run the functions)."""
    with target.connect(dbname) as conn:
        before = conn.execute("select pg_conf_load_time()").fetchone()[0]  # type: ignore[index]
        conn.execute("select pg_reload_conf()")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with target.connect(dbname) as conn:
            row = conn.execute(
                "select pg_conf_load_time(), "
                "(select string_agg(name || ': ' || error, '; ') from pg_file_settings "
                " where error is not null)"
            ).fetchone()
        assert row is not None
        if row[1]:
            raise SettingsError(f"the server rejected its configuration: {row[1]}")
        if row[0] > before:
            return
        time.sleep(0.05)
    raise TargetError("the server did not reload its configuration in time")


class PortTaken(TargetError):
    """The server could not bind its port: another process took it first."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
