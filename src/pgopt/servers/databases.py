"""pgopt's own databases on a server: the lab database `pgopt_lab`, the template
databases a fresh step's runs are cloned from (`pgopt_lab_t1`, `pgopt_lab_t2`, ...),
and in a round of interleaved slices each step's clone while it waits for its turn
(`pgopt_lab_tr1`, ...: the templates' prefix, so a killed run's are found alike).

Every database pgopt makes carries LAB_COMMENT, so pgopt drops only what it made:
at the end of a run, and at the start of the next one when a run was killed
before it could. Clones are made with `CREATE DATABASE ... TEMPLATE ... STRATEGY
FILE_COPY`: the template's files copied whole (with two checkpoints), not written
through the WAL page by page as the default WAL_LOG strategy does, which for a
big database costs its size again in WAL. From PostgreSQL 18 the copy is asked
for with `file_copy_method = clone`: the kernel's copy_file_range(), which XFS,
Btrfs and ZFS answer by sharing the blocks (near-instant whatever the size) and
other filesystems (ext4) by copying them inside the kernel.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg import sql

from ..errors import TargetError, first_line
from .base import LAB_COMMENT, LAB_DATABASE

TEMPLATE_PREFIX = f"{LAB_DATABASE}_t"
PARKED_PREFIX = f"{LAB_DATABASE}_tr"  # a step's clone waiting for its next slice
CLONING_FILESYSTEMS = frozenset({"xfs", "btrfs", "zfs", "bcachefs"})
RENAME_ATTEMPTS = 50  # a terminated session takes a moment to leave
FILE_COPY_FROM = 150000  # STRATEGY FILE_COPY: PostgreSQL 15 (before it, the only way)
CLONE_FROM = 180000  # file_copy_method = clone: PostgreSQL 18


def template_name(number: int) -> str:
    return f"{TEMPLATE_PREFIX}{number}"


def parked_name(number: int) -> str:
    """The name of a round's `number`th clone while another step's slice runs."""
    return f"{PARKED_PREFIX}{number}"


def clone_method(version_num: int, filesystem: str | None) -> str:
    """How a clone copies its template's files on this server, in words: what the
    report says of every run's preparation. `filesystem`: None where pgopt cannot
    see the server's disk (a server reached with --dsn)."""
    if version_num < CLONE_FROM:
        return "a file copy: PostgreSQL before 18 cannot clone"
    if filesystem is None:
        return "a clone where the server's filesystem can share blocks, else a file copy"
    if filesystem in CLONING_FILESYSTEMS:
        return f"a clone: {filesystem} shares the blocks, near-instant"
    return f"a file copy in the kernel: {filesystem} cannot share blocks"


def create(
    admin: psycopg.Connection[Any], name: str = LAB_DATABASE, *, template: str | None = None
) -> None:
    """Create `name` (empty, or a copy of `template`) with pgopt's comment."""
    ident = sql.Identifier(name)
    if template is None:
        admin.execute(sql.SQL("create database {}").format(ident))
    else:
        version = admin.info.server_version
        if version >= CLONE_FROM:
            admin.execute("set file_copy_method = clone")
        strategy = sql.SQL(" strategy file_copy") if version >= FILE_COPY_FROM else sql.SQL("")
        admin.execute(
            sql.SQL("create database {} template {}{}").format(
                ident, sql.Identifier(template), strategy
            )
        )
    admin.execute(sql.SQL("comment on database {} is {}").format(ident, sql.Literal(LAB_COMMENT)))


def drop(admin: psycopg.Connection[Any], name: str = LAB_DATABASE) -> None:
    """Drop `name` if it exists, ending the sessions still in it."""
    ident = sql.Identifier(name)
    if admin.info.server_version >= 130000:
        admin.execute(sql.SQL("drop database if exists {} with (force)").format(ident))
        return
    _end_sessions(admin, name)
    admin.execute(sql.SQL("drop database if exists {}").format(ident))


def rename(admin: psycopg.Connection[Any], old: str, new: str) -> None:
    """Rename a database of pgopt's, ending the sessions still in it (a pooler's,
    the last run's): ALTER DATABASE refuses while anyone is connected."""
    stmt = sql.SQL("alter database {} rename to {}").format(
        sql.Identifier(old), sql.Identifier(new)
    )
    for attempt in range(RENAME_ATTEMPTS):
        _end_sessions(admin, old)
        try:
            admin.execute(stmt)
            return
        except psycopg.errors.ObjectInUse as e:
            if attempt == RENAME_ATTEMPTS - 1:
                raise TargetError(f"cannot rename {old}: {first_line(e)}") from e
            time.sleep(0.1)


def size_bytes(admin: psycopg.Connection[Any], name: str) -> int:
    row = admin.execute("select pg_database_size(%s)", [name]).fetchone()
    return int(row[0]) if row else 0


def leftovers(admin: psycopg.Connection[Any]) -> list[str]:
    """Templates an earlier pgopt run made and could not drop (it was killed)."""
    rows = admin.execute(
        "select datname from pg_database "
        "where datname like %s and shobj_description(oid, 'pg_database') = %s",
        [TEMPLATE_PREFIX.replace("_", r"\_") + "%", LAB_COMMENT],
    ).fetchall()
    return [str(r[0]) for r in rows]


def _end_sessions(admin: psycopg.Connection[Any], name: str) -> None:
    admin.execute(
        "select pg_terminate_backend(pid) from pg_stat_activity "
        "where datname = %s and pid <> pg_backend_pid()",
        [name],
    )
