"""Hot standbys of a server: throwaway ones pgopt makes with pg_basebackup beside its
embedded primary, or a user's own reached by DSN; and how far behind each one is.

A throwaway standby is an embedded server of its own (its own folder, port and
owner file, so it is stopped and removed on every way out and reaped after a
SIGKILL like any other) whose data folder comes from `pg_basebackup -R -C -S`:
streaming replication through a replication slot of its own, which it drops when
it goes. It is ready once it has replayed the primary's WAL up to the moment it
started.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from types import TracebackType
from typing import Any

import psycopg

from ..binaries import PgBinaries
from ..errors import SettingsError, TargetError, first_line
from .base import LAB_DATABASE, Target
from .dsn import accept
from .embedded import SUPERUSER, EmbeddedTarget
from .settings import SettingChange

CATCH_UP_TIMEOUT_S = 120.0
NO_SETTINGS = "pgopt changes no setting on a standby given by --standby-dsn"
SLOT_PREFIX = "pgopt_standby_"


class EmbeddedStandby(EmbeddedTarget):
    """A hot standby of an embedded primary, streaming through a slot; a context manager."""

    def __init__(
        self,
        primary: EmbeddedTarget,
        number: int,
        *,
        say: Callable[[str], None] = lambda _msg: None,
        settings: dict[str, str] | None = None,
    ) -> None:
        primary.binaries.require("pg_basebackup")
        # the standby's walreceiver reports cluster_name as its application_name
        own = {"cluster_name": f"standby{number}", **(settings or {})}
        super().__init__(primary.binaries, workdir=primary.workdir_base, say=say, base_settings=own)
        self.primary = primary
        self.number = number
        self.name = f"standby{number}"
        self.slot = f"{SLOT_PREFIX}{number}"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "role": "standby", "slot": self.slot}

    def _make_data_dir(self) -> None:
        self.say(f"pg_basebackup: {self.name} of the primary, streaming through slot {self.slot}")
        primary = self.primary.conninfo("postgres")
        self._run_as_server(
            [
                str(self.binaries.path("pg_basebackup")),
                "--pgdata",
                str(self.data_dir),
                "--host",
                str(primary["host"]),
                "--port",
                str(primary["port"]),
                "--username",
                SUPERUSER,
                "--wal-method=stream",
                "--write-recovery-conf",
                "--create-slot",
                "--slot",
                self.slot,
                "--checkpoint=fast",
                "--no-sync",
            ],
            "pg_basebackup",
        )

    def _after_start(self, conn: psycopg.Connection[Any]) -> None:
        """A standby has the primary's databases: wait until it has replayed up to now."""
        wait_for_replay(self.primary, self, CATCH_UP_TIMEOUT_S)

    def _teardown(self) -> None:
        try:
            super()._teardown()
        finally:
            drop_slot(self.primary, self.slot)


def drop_slot(primary: Target, slot: str) -> None:
    """Drop a standby's slot so the primary keeps no WAL for it; a primary already gone
    has nothing to keep."""
    try:
        with primary.connect("postgres") as conn:
            conn.execute(
                "select pg_drop_replication_slot(slot_name) from pg_replication_slots "
                "where slot_name = %s and not active",
                [slot],
            )
    except (TargetError, psycopg.Error):
        pass


def wait_for_replay(primary: Target, standby: Target, timeout_s: float) -> float:
    """Wait until `standby` has replayed the primary's WAL as of now; return the seconds
    it took."""
    with primary.connect("postgres") as conn:
        row = conn.execute("select pg_current_wal_lsn()").fetchone()
    assert row is not None
    target_lsn = str(row[0])
    started = time.monotonic()
    with standby.connect("postgres") as conn:
        while True:
            row = conn.execute(
                "select pg_is_in_recovery(), pg_last_wal_replay_lsn() >= %s::pg_lsn",
                [target_lsn],
            ).fetchone()
            assert row is not None
            if not row[0]:
                raise TargetError(f"{standby.display_dsn()} is not a standby (not in recovery)")
            if row[1]:
                return time.monotonic() - started
            if time.monotonic() - started > timeout_s:
                raise TargetError(
                    f"{standby.display_dsn()} did not replay the primary's WAL up to "
                    f"{target_lsn} within {timeout_s:.0f}s"
                )
            time.sleep(0.05)


class AttachedStandby(Target):
    """A user's hot standby (`--standby-dsn`): read from, never written or configured.
    pgopt's database reaches it by replication from the primary (`--dsn`)."""

    kind = "dsn"

    def __init__(self, binaries: PgBinaries, dsn: str, number: int) -> None:
        super().__init__()
        self.binaries = binaries
        self.name = f"standby{number}"
        self._params: dict[str, Any] = accept(dsn, "--standby-dsn")

    def conninfo(self, dbname: str | None = None) -> dict[str, Any]:
        return {**self._params, "dbname": dbname or LAB_DATABASE}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "role": "standby"}

    def __enter__(self) -> AttachedStandby:
        try:
            with self.connect("postgres") as conn:
                self._read_version(conn)
                row = conn.execute("select pg_is_in_recovery()").fetchone()
        except psycopg.Error as e:
            raise TargetError(f"cannot read {self.display_dsn()}: {first_line(e)}") from e
        if not row or not row[0]:
            raise TargetError(f"--standby-dsn {self.display_dsn()} is not a hot standby")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Nothing to undo: pgopt only read from it."""

    def _apply(self, changes: list[SettingChange]) -> None:
        raise SettingsError(NO_SETTINGS)


def unavailable(primary: Target, standby_dsns: tuple[str, ...]) -> str | None:
    """Why this primary cannot have the standbys a lab needs, or None."""
    if standby_dsns:
        return None
    if not isinstance(primary, EmbeddedTarget):
        return "the lab needs hot standbys of your server: give each with --standby-dsn"
    if not primary.binaries.has("pg_basebackup"):
        return f"making a standby needs pg_basebackup, which is not in {primary.binaries.bindir}"
    return None


@contextmanager
def standbys_of(
    primary: Target, count: int, standby_dsns: tuple[str, ...], say: Callable[[str], None]
) -> Iterator[tuple[Target, ...]]:
    """The standbys a lab runs on, caught up with the primary: the user's own
    (`--standby-dsn`), or `count` throwaway ones of pgopt's embedded primary, stopped and
    removed on the way out."""
    with ExitStack() as stack:
        nodes: list[Target] = []
        if standby_dsns:
            for number, dsn in enumerate(standby_dsns, 1):
                node = stack.enter_context(AttachedStandby(primary.binaries, dsn, number))
                say(f"waiting for {node.name} to replay the primary's WAL")
                wait_for_replay(primary, node, CATCH_UP_TIMEOUT_S)
                nodes.append(node)
        else:
            assert isinstance(primary, EmbeddedTarget)
            for number in range(1, count + 1):
                nodes.append(stack.enter_context(EmbeddedStandby(primary, number, say=say)))
        yield tuple(nodes)
