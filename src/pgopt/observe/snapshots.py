"""Server statistics before and after a timed run.

Reads, with the queries in queries/ chosen by server version: pg_stat_database
of the watched databases, pg_stat_wal (14+), pg_stat_io (16+), the checkpoints
(pg_stat_checkpointer from 17, pg_stat_bgwriter before) and pg_stat_statements
where it is installed; and the WAL position, exact at any moment, for the WAL of
each phase. Their differences are computed, without a server, in
analysis/observed.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from ..analysis.observed import Snapshot
from ..queries import find, load
from ..servers.read_only import dict_rows


def _counters(row: dict[str, Any]) -> dict[str, int]:
    return {k: int(v or 0) for k, v in row.items()}


def take(conn: psycopg.Connection[Any], *, statements: bool, databases: Sequence[str]) -> Snapshot:
    """One snapshot of the statistics of `databases`; `conn` is an autocommit connection."""
    version = conn.info.server_version
    scope = {"databases": list(databases)}
    conn.execute("select pg_stat_clear_snapshot()")
    snap: Snapshot = {}
    rows = dict_rows(conn, load("stat_database", version), scope)
    snap["database"] = _counters(rows[0]) if rows else {}
    wal = find("stat_wal", version)
    if wal is not None:
        rows = dict_rows(conn, wal)
        snap["wal"] = _counters(rows[0]) if rows else {}
    io = find("stat_io", version)
    if io is not None:
        snap["io"] = {str(row.pop("backend_type")): _counters(row) for row in dict_rows(conn, io)}
    rows = dict_rows(conn, load("checkpoints", version))
    snap["checkpoints"] = int(rows[0]["checkpoints"] or 0) if rows else 0
    if statements:
        snap["statements"] = {
            str(row.pop("queryid")): {
                **row,
                "calls": int(row["calls"]),
                "total_ms": float(row["total_ms"]),
                "rows": int(row["rows"]),
                "shared_blks_hit": int(row["shared_blks_hit"]),
                "shared_blks_read": int(row["shared_blks_read"]),
            }
            for row in dict_rows(conn, load("statements", version), scope)
        }
    return snap


def wal_position(conn: psycopg.Connection[Any]) -> int:
    """Bytes of WAL inserted since the cluster began: differences give WAL written."""
    rows = dict_rows(conn, load("wal_position"))
    return int(rows[0]["position"]) if rows else 0


def statements_available(conn: psycopg.Connection[Any]) -> bool:
    """pg_stat_statements is preloaded and installed (or installable) in this database."""
    rows = dict_rows(conn, load("statements_available"))
    if not rows or not rows[0]["preloaded"] or not rows[0]["installable"]:
        return False
    try:
        conn.execute("create extension if not exists pg_stat_statements")
    except psycopg.Error:
        return False
    return True
