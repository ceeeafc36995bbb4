"""A real connection pooler beside the embedded server: pgbouncer in transaction
pooling mode, started and stopped by pgopt like the server itself.

Seed 000's checklist names a pool for "many short connections". A lab step with
`pooler = "pgbouncer"` sends pgbench through it: each client's connection (with
`--connect`, one per transaction) ends at pgbouncer, which hands the transaction to
one of a few server connections it keeps open. pgbouncer lives in the server's
folder, runs as the server's user (it refuses root as PostgreSQL does), listens on
the server's socket folder with a port of its own, and is stopped before the server
on every way out; the folder goes with the server's.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg

from .. import stopping
from ..errors import BinariesError, TargetError
from ..processes import stop
from .base import LAB_DATABASE, Target
from .embedded import SUPERUSER, EmbeddedTarget, free_port

INSTALL_HINT = "apt-get install pgbouncer"
START_TIMEOUT_S = 20.0
# SIGTERM: immediate shutdown (SIGINT would wait for every client to leave)
ESCALATION = ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0))


def pgbouncer_path() -> str | None:
    return shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if Path(p).is_file()), None
    )


def unavailable(target: Target) -> str | None:
    """Why a pooled step cannot run against this target, or None."""
    if not isinstance(target, EmbeddedTarget):
        return "the pooler steps start pgbouncer beside pgopt's own embedded server (no --dsn)"
    if pgbouncer_path() is None:
        return f"pgbouncer is not installed ({INSTALL_HINT})"
    return None


def config(server: EmbeddedTarget, folder: Path, port: int, pool_size: int) -> str:
    """pgbouncer.ini, its files in `folder`: the lab database through the server's
    socket, transaction pooling, `pool_size` server connections at most."""
    return "\n".join(
        [
            "; written by pgopt",
            "[databases]",
            f"{LAB_DATABASE} = host={server.socket_dir} port={server.port} dbname={LAB_DATABASE}",
            "[pgbouncer]",
            "listen_addr =",
            f"listen_port = {port}",
            f"unix_socket_dir = {server.socket_dir}",
            "auth_type = trust",
            f"auth_file = {folder / 'userlist.txt'}",
            "pool_mode = transaction",
            f"default_pool_size = {pool_size}",
            "max_client_conn = 1000",
            "server_reset_query =",
            f"logfile = {folder / 'pgbouncer.log'}",
            f"pidfile = {folder / 'pgbouncer.pid'}",
            "",
        ]
    )


def _spawn(argv: list[str], folder: Path, kwargs: dict[str, Any]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            cwd=folder,
            start_new_session=True,
            **kwargs,
        )
    except OSError as e:
        raise BinariesError(f"cannot run pgbouncer: {e}") from e


class Pgbouncer:
    """Context manager: pgbouncer running beside `server` from entry to exit."""

    def __init__(self, server: EmbeddedTarget, pool_size: int) -> None:
        self.server, self.pool_size = server, pool_size
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Pgbouncer:
        binary = pgbouncer_path()
        if binary is None or self.server.root is None:
            raise TargetError(f"pgbouncer is not installed ({INSTALL_HINT})")
        folder = self.server.root / "pgbouncer"
        folder.mkdir(exist_ok=True)
        self.port = free_port()
        ini = folder / "pgbouncer.ini"
        ini.write_text(config(self.server, folder, self.port, self.pool_size))
        (folder / "userlist.txt").write_text(f'"{SUPERUSER}" ""\n')
        user = self.server.user
        if user is not None:
            user.chown_tree(folder)
        kwargs = user.popen_kwargs() if user is not None else {}
        try:
            with stopping.held():  # a Ctrl-C waits until the child is held, to be stopped
                self._proc = _spawn([binary, str(ini)], folder, kwargs)
            self._wait_ready(folder / "pgbouncer.log")
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_ready(self, log: Path) -> None:
        assert self._proc is not None
        params = {**self.server.conninfo(), "port": self.port}
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._proc.poll() is not None:
                tail = (
                    log.read_text(errors="replace").strip().splitlines()[-3:]
                    if log.exists()
                    else []
                )
                raise TargetError("pgbouncer did not start: " + " / ".join(tail))
            try:
                with psycopg.connect(**params, connect_timeout=2) as conn:
                    conn.execute("select 1")
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise TargetError(
                        f"pgbouncer did not accept connections in {START_TIMEOUT_S:.0f}s"
                    ) from None
                time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            stop(proc, ESCALATION)
