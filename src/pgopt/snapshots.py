"""Server statistics before and after a timed run, and their differences.

Reads pg_stat_database (the lab database), pg_stat_wal (14+), pg_stat_io (16+),
the checkpointer (pg_stat_checkpointer from 17, pg_stat_bgwriter before) and
pg_stat_statements where it is installed; and the WAL position, exact at any
moment, for the WAL of each phase. `delta` is pure, so the arithmetic is
tested without a server.
"""

from __future__ import annotations

from typing import Any

import psycopg

from .target.base import LAB_DATABASE

Snapshot = dict[str, Any]

DATABASE_COLUMNS = (
    "xact_commit",
    "xact_rollback",
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "temp_bytes",
    "deadlocks",
)
WAL_COLUMNS = ("wal_records", "wal_fpi", "wal_bytes", "wal_buffers_full")
IO_COLUMNS = ("reads", "writes", "extends", "fsyncs")
TOP_STATEMENTS = 5


def take(conn: psycopg.Connection[Any], *, statements: bool) -> Snapshot:
    """One snapshot; `conn` is an autocommit connection to the lab database."""
    version = conn.info.server_version
    conn.execute("select pg_stat_clear_snapshot()")
    snap: Snapshot = {}
    row = conn.execute(
        f"select {', '.join(DATABASE_COLUMNS)} from pg_stat_database where datname = %s",
        [LAB_DATABASE],
    ).fetchone()
    snap["database"] = (
        dict(zip(DATABASE_COLUMNS, (int(v or 0) for v in row), strict=True)) if row else {}
    )
    if version >= 140000:
        row = conn.execute(f"select {', '.join(WAL_COLUMNS)} from pg_stat_wal").fetchone()
        snap["wal"] = _as_dict(WAL_COLUMNS, row)
    if version >= 160000:
        rows = conn.execute(
            "select backend_type, "
            + ", ".join(f"coalesce(sum({c}), 0)" for c in IO_COLUMNS)
            + " from pg_stat_io group by backend_type"
        ).fetchall()
        snap["io"] = {
            r[0]: dict(zip(IO_COLUMNS, (int(v) for v in r[1:]), strict=True)) for r in rows
        }
    if version >= 170000:
        row = conn.execute("select num_timed + num_requested from pg_stat_checkpointer").fetchone()
    else:
        row = conn.execute(
            "select checkpoints_timed + checkpoints_req from pg_stat_bgwriter"
        ).fetchone()
    snap["checkpoints"] = int(row[0]) if row else 0
    if statements:
        snap["statements"] = _statements(conn, version)
    return snap


def wal_position(conn: psycopg.Connection[Any]) -> int:
    """Bytes of WAL inserted since the cluster began: differences give WAL written."""
    row = conn.execute("select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')").fetchone()
    return int(row[0]) if row else 0


def _as_dict(columns: tuple[str, ...], row: Any) -> dict[str, int]:
    return dict(zip(columns, (int(v or 0) for v in row), strict=True)) if row else {}


def statements_available(conn: psycopg.Connection[Any]) -> bool:
    """pg_stat_statements is preloaded and installed (or installable) in the lab database."""
    row = conn.execute(
        "select current_setting('shared_preload_libraries') ~ 'pg_stat_statements', "
        "exists (select 1 from pg_available_extensions where name = 'pg_stat_statements')"
    ).fetchone()
    if not row or not row[0] or not row[1]:
        return False
    try:
        conn.execute("create extension if not exists pg_stat_statements")
    except psycopg.Error:
        return False
    return True


def _statements(conn: psycopg.Connection[Any], version: int) -> dict[str, dict[str, Any]]:
    total = "total_exec_time" if version >= 130000 else "total_time"
    rows = conn.execute(
        f"select queryid::text, query, calls, {total}, rows, shared_blks_hit, shared_blks_read "
        "from pg_stat_statements s join pg_database d on d.oid = s.dbid "
        "where d.datname = %s and queryid is not null",
        [LAB_DATABASE],
    ).fetchall()
    return {
        qid: {
            "query": query,
            "calls": int(calls),
            "total_ms": float(total_ms),
            "rows": int(n),
            "shared_blks_hit": int(hit),
            "shared_blks_read": int(read),
        }
        for qid, query, calls, total_ms, n, hit, read in rows
    }


def delta(before: Snapshot, after: Snapshot) -> dict[str, Any]:
    """after - before, section by section; statements: the top ones by time spent."""
    out: dict[str, Any] = {}
    for section in ("database", "wal"):
        if section in after:
            out[section] = {
                k: v - before.get(section, {}).get(k, 0) for k, v in after[section].items()
            }
    if "io" in after:
        out["io"] = {}
        for backend, counters in after["io"].items():
            base = before.get("io", {}).get(backend, {})
            diff = {k: v - base.get(k, 0) for k, v in counters.items()}
            if any(diff.values()):
                out["io"][backend] = diff
    out["checkpoints"] = after.get("checkpoints", 0) - before.get("checkpoints", 0)
    if "statements" in after:
        out["statements"] = _statement_delta(before.get("statements", {}), after["statements"])
    return out


def _statement_delta(
    before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    rows = []
    for qid, stat in after.items():
        base = before.get(qid, {})
        calls = stat["calls"] - base.get("calls", 0)
        if calls <= 0:
            continue
        total = stat["total_ms"] - base.get("total_ms", 0.0)
        rows.append(
            {
                "query": stat["query"],
                "calls": calls,
                "total_ms": round(total, 3),
                "mean_ms": round(total / calls, 4),
                "rows": stat["rows"] - base.get("rows", 0),
                "shared_blks_hit": stat["shared_blks_hit"] - base.get("shared_blks_hit", 0),
                "shared_blks_read": stat["shared_blks_read"] - base.get("shared_blks_read", 0),
            }
        )
    rows.sort(key=lambda r: r["total_ms"], reverse=True)
    return rows[:TOP_STATEMENTS]


def unit_figures(stats: dict[str, Any], transactions: int | None) -> dict[str, float]:
    """The figures that compare across steps: WAL bytes and blocks per transaction, or
    per run for work that is not counted in transactions (timed phases)."""
    per, div = ("tx", transactions) if transactions else ("run", 1)
    if not div or div < 0:
        return {}
    db = stats.get("database", {})
    out = {
        f"blks_read_per_{per}": db.get("blks_read", 0) / div,
        f"blks_hit_per_{per}": db.get("blks_hit", 0) / div,
    }
    if "wal" in stats:
        out[f"wal_bytes_per_{per}"] = stats["wal"].get("wal_bytes", 0) / div
        out[f"wal_fpi_per_{per}"] = stats["wal"].get("wal_fpi", 0) / div
    return {k: round(v, 3) for k, v in out.items()}
