"""A physical copy of the user's server as the throwaway server an A/B runs on
(`pgopt ab --copy physical`, or `auto` where it can be): pg_basebackup of the source
into the new server's data directory. The copy is as old as the source: its dead
rows, free space, row order, visibility map and planner statistics are the source's
own, which a dump and restore cannot give (a restored heap has no dead rows and its
rows in key order: sysbench's range reads ran 2.6x faster on such a copy than on the
aged source, issue 56).

pg_basebackup needs the source's own major version (the binaries the copy runs on),
a role with REPLICATION (or a superuser) and a pg_hba.conf line that lets it
connect for replication: `obstacle()` says which is missing before anything is
copied, and a refused connection is said in one line. The copy holds the whole
cluster; once it runs, its other databases are dropped and the source's database
renamed `pgopt_source` (the lab's data starts as a file copy of it). Its
configuration is pgopt's (a fresh postgresql.conf, pg_hba.conf and pg_ident.conf:
the source's settings, libraries and certificates stay with the source), and it
reads nothing from the source once started. pg_basebackup only reads the source
(its WAL through a temporary slot, gone when it disconnects); like pg_dump, it is
named on its command line. It paces itself as the caller asks (its checkpoint,
fast or spread, and --max-rate: ab/reading.py says why and how much) and tells
its progress, which `basebackup()` reads from its stderr as it comes.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import psycopg
from psycopg import sql

from ..binaries import PgBinaries
from ..errors import first_line
from ..psql import Psql
from ..redact import redact_dsn
from . import databases, read_only
from .base import LAB_COMMENT
from .dsn import for_client
from .embedded import EmbeddedTarget

SOURCE_DATABASE = "pgopt_source"
# what the source's data directory holds that the copy replaces with pgopt's own
REPLACED = (
    "postgresql.conf",
    "postgresql.auto.conf",
    "pg_hba.conf",
    "pg_ident.conf",
    "standby.signal",
    "recovery.signal",
    "postmaster.opts",
    "backup_label.old",
)
HBA = "local all all trust\nhost all all 127.0.0.1/32 trust\n"
# pg_basebackup --progress: "  12345/67890 kB (18%), 0/1 tablespace (...)"
_PROGRESS = re.compile(r"(\d+)/(\d+) kB \(\d+%\)")
_CHECKPOINT_DONE = "checkpoint completed"  # --verbose


class BackupProgress(Protocol):
    """What pg_basebackup tells while it runs: its checkpoint done, bytes copied."""

    def checkpoint_done(self) -> None: ...

    def copied(self, done_bytes: int, total_bytes: int) -> None: ...


def obstacle(dsn: str, binaries: PgBinaries) -> str | None:
    """Why the server at `dsn` cannot be copied physically onto `binaries`, or None
    (read in a read-only session; its connection errors are said as such)."""
    try:
        with read_only.connect(dsn, "ab") as conn:
            row = conn.execute(
                "select current_setting('server_version_num')::int, "
                "(select rolsuper or rolreplication from pg_roles where rolname = current_user), "
                "(select count(*) from pg_tablespace where spcname not in "
                "('pg_default', 'pg_global'))"
            ).fetchone()
    except psycopg.Error as e:
        return f"cannot read {redact_dsn(dsn)}: {first_line(e)}"
    assert row is not None
    major = int(row[0]) // 10000
    if major != binaries.major:
        return (
            f"the source is PostgreSQL {major} and the copy would run PostgreSQL "
            f"{binaries.major} ({binaries.bindir}): a physical copy needs the same major "
            f"version (--pg-bin: PostgreSQL {major}'s programs)"
        )
    if not row[1]:
        return "the source's role has neither REPLICATION nor SUPERUSER (pg_basebackup needs one)"
    if row[2]:
        return (
            f"the source has {row[2]} tablespace(s) of its own, which a copy on this machine "
            "would have to map elsewhere"
        )
    return None


def source_facts(dsn: str) -> tuple[str, str, int]:
    """The source's database, its cluster's bootstrap superuser (the copy's own), and
    the whole cluster's size in bytes (what a physical copy copies)."""
    with read_only.connect(dsn, "ab") as conn:
        row = conn.execute(
            "select current_database(), (select rolname from pg_roles where oid = 10), "
            "(select sum(pg_database_size(oid)) from pg_database)::bigint"
        ).fetchone()
    assert row is not None
    return str(row[0]), str(row[1]), int(row[2] or 0)


def checkpoint_settings(dsn: str) -> tuple[float, float]:
    """The source's checkpoint_timeout (seconds) and checkpoint_completion_target: how
    long a spread checkpoint may take there."""
    with read_only.connect(dsn, "ab") as conn:
        row = conn.execute(
            "select current_setting('checkpoint_timeout')::interval, "
            "current_setting('checkpoint_completion_target')::float"
        ).fetchone()
    assert row is not None
    return float(row[0].total_seconds()), float(row[1])


def basebackup(
    binaries: PgBinaries,
    dsn: str,
    into: Path,
    *,
    checkpoint: str,
    max_rate: str | None,
    progress: BackupProgress,
) -> None:
    """pg_basebackup of the server at `dsn` into the folder `into` (made by it), its WAL
    streamed alongside, after a checkpoint of that kind (`fast`, `spread`), at most
    `max_rate` (--max-rate: kB a second; None, no limit), its progress told to
    `progress`; an error (exit 2) with its own reason when it cannot connect (no
    replication line in pg_hba.conf, a role without REPLICATION)."""
    conninfo, env = for_client(dsn)

    def line(text: str) -> None:
        if _CHECKPOINT_DONE in text:
            progress.checkpoint_done()
        elif match := _PROGRESS.search(text):
            progress.copied(int(match.group(1)) * 1024, int(match.group(2)) * 1024)

    Psql(binaries, env).program_lines(
        "pg_basebackup",
        [
            f"--pgdata={into}",
            f"--dbname={conninfo}",
            "--wal-method=stream",
            f"--checkpoint={checkpoint}",
            *([f"--max-rate={max_rate}"] if max_rate else []),
            "--progress",
            "--verbose",  # says when its checkpoint is done
            "--no-sync",  # a throwaway copy, read soon
            "--no-password",
            "--label=pgopt ab",
        ],
        what=f"pg_basebackup of {redact_dsn(dsn)}",
        line=line,
    )


class PhysicalCopyTarget(EmbeddedTarget):
    """A throwaway server whose data directory is a pg_basebackup of the source,
    made beforehand (`backup`, on the same filesystem: moved in, not copied)."""

    admin_database = "template1"  # the source's own databases are renamed and dropped

    def __init__(
        self,
        binaries: PgBinaries,
        backup: Path,
        *,
        database: str,
        superuser: str,
        workdir: Path | None = None,
        keep: bool = False,
        say: Callable[[str], None] = lambda _msg: None,
    ) -> None:
        super().__init__(binaries, workdir=workdir, keep=keep, say=say)
        self.backup, self.database = backup, database
        self.superuser = superuser

    def _make_data_dir(self) -> None:
        self.say(f"the physical copy of the source as PostgreSQL {self.binaries.version}'s data")
        shutil.move(self.backup, self.data_dir)
        for name in REPLACED:
            (self.data_dir / name).unlink(missing_ok=True)
        (self.data_dir / "pg_hba.conf").write_text(HBA)
        (self.data_dir / "pg_ident.conf").write_text("")
        (self.data_dir / "postgresql.auto.conf").write_text("# written by pgopt\n")
        os.chmod(self.data_dir, 0o700)
        if self.user is not None:
            self.user.chown_tree(self.data_dir)

    def _after_start(self, conn: psycopg.Connection[Any]) -> None:
        """The source's database as pgopt_source, the cluster's others dropped, then
        the lab database as on any server of pgopt's."""
        rows = conn.execute(
            "select datname from pg_database where not datistemplate and datname <> %s",
            [self.database],
        ).fetchall()
        for (name,) in rows:
            databases.drop(conn, str(name))
        if self.database != SOURCE_DATABASE:
            databases.rename(conn, self.database, SOURCE_DATABASE)
        conn.execute(
            sql.SQL("comment on database {} is {}").format(
                sql.Identifier(SOURCE_DATABASE), sql.Literal(LAB_COMMENT)
            )
        )
        super()._after_start(conn)
