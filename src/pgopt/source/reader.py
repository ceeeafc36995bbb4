"""Read the source database, read-only, in a session the caller holds: its
pg_stat_statements (the statements its clients sent), its tables' columns and sizes,
each column's pg_stats row, or, where the source has none, up to SAMPLE_ROWS values
sampled from its rows, the largest value of a unique column, and a log capture matched
to its statements. How its clients run the statements is watch.py's.
replay/from_source.py reads what a synthesized workload is made of with these.

The session is servers/read_only.py's, so nothing here can write to the user's
database.
Read before pg_dump copies the source, so the copy's own statements are not
taken for the workload.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
from pglast import ast, parse_sql
from pglast.enums.lockoptions import LockClauseStrength
from pglast.parser import ParseError
from psycopg import sql

from ..errors import UsageError, first_line
from ..queries import is_own, load
from ..servers.read_only import dict_rows
from ..sqltree import walk
from .capture import Capture, capture_of
from .catalog import Catalog, Column, SourceStatement
from .log_reader import LogError, read_log
from .taken_log import TakenLog
from .watch import TRANSACTION_CONTROL

SAMPLE_ROWS = 200
ENABLE = (
    "add pg_stat_statements to shared_preload_libraries, restart the server, run "
    "'create extension pg_stat_statements' in the database, and run your workload; "
    "or name pgbench scripts ([workload] scripts, --script)"
)


def read_capture(
    conn: psycopg.Connection[Any], log: Path | TakenLog, statements: list[SourceStatement]
) -> Capture:
    """The log capture `log` (a file, or the lines pgopt had the source log), read with
    the source's log_line_prefix and only this database's lines where the log names
    them, its statements matched to the source's pg_stat_statements."""
    row = dict_rows(
        conn, "select current_setting('log_line_prefix') as p, current_database() as d"
    )[0]
    prefix, database = str(row["p"]), str(row["d"])
    name = str(log) if isinstance(log, Path) else log.name
    try:
        if isinstance(log, Path):
            with log.open(encoding="utf-8", errors="replace", newline="") as f:
                logged = read_log(f, prefix, database)
        else:
            logged = read_log(io.StringIO(log.text, newline=""), prefix, database)
    except OSError as e:
        raise UsageError(f"cannot read the log capture {log}: {e.strerror or e}") from None
    except LogError as e:
        raise UsageError(f"{name}: {e}") from None
    capture = capture_of(logged, statements)
    if isinstance(log, TakenLog):
        capture.origin, capture.host = log.name, log.host
    if not capture.values:
        unmatched = next(iter(capture.unmatched), "")
        raise UsageError(
            f"{name}: none of its {capture.statements:,} statements is in the source's "
            "pg_stat_statements (a capture of another database, or statistics reset since)"
            + (f"; the first: {unmatched[:80]}" if unmatched else "")
        )
    return capture


def require_statements(conn: psycopg.Connection[Any], where: str) -> None:
    """Fails at once where the source's pg_stat_statements cannot be read: before a
    watch or a capture of the source, which would otherwise be waited for in vain."""
    installed = dict_rows(conn, "select 1 from pg_extension where extname = 'pg_stat_statements'")
    if not installed:
        raise UsageError(f"{where} has no pg_stat_statements to take the workload from: {ENABLE}")
    try:
        dict_rows(conn, "select 1 from pg_stat_statements limit 1")
    except psycopg.Error as e:
        raise UsageError(f"{where}: pg_stat_statements: {first_line(e)}: {ENABLE}") from e


def read_statements(conn: psycopg.Connection[Any], where: str) -> list[SourceStatement]:
    """The source's statements of this database (`require_statements` checked first)."""
    try:
        rows = dict_rows(conn, load("source_statements", conn.info.server_version))
    except psycopg.Error as e:
        raise UsageError(f"{where}: pg_stat_statements: {first_line(e)}: {ENABLE}") from e
    if not rows:
        raise UsageError(
            f"{where}: pg_stat_statements holds no statements of this database yet: "
            "run your workload first"
        )
    return [
        SourceStatement(
            str(r["queryid"]),
            str(r["query"]),
            int(r["calls"]),
            float(r["total_ms"]),
            int(r["rows"] or 0),
            int(r["blocks"] or 0),
            int(r["blocks_read"] or 0),
            float(r["max_ms"] or 0.0),
        )
        for r in rows
        if not _not_the_clients(str(r["query"]))
    ]


def _not_the_clients(query: str) -> bool:
    """Transaction control (the replay makes its own), pgopt's own reads of the source,
    PostgreSQL's own checks of deferred foreign keys: no client sent them."""
    return bool(TRANSACTION_CONTROL.match(query)) or is_own(query) or foreign_key_check(query)


def with_largest(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    columns: Iterable[tuple[str, str, str]],
) -> Catalog:
    """The catalog with the largest value of each of `columns` (schema, table, column:
    unique integer columns the workload inserts into or updates; new keys start above
    it)."""
    tables = {k: dict(v) for k, v in catalog.tables.items()}
    for schema, table, name in columns:
        column = tables[(schema, table)][name]
        query = sql.SQL("select max({c})::text as m from {s}.{t}").format(
            c=sql.Identifier(name), s=sql.Identifier(schema), t=sql.Identifier(table)
        )
        largest = dict_rows(conn, query)[0]["m"]
        tables[(schema, table)][name] = replace(column, largest=largest)
    return replace(catalog, tables=tables)


def read_catalog(conn: psycopg.Connection[Any]) -> Catalog:
    tables: dict[tuple[str, str], dict[str, Column]] = {}
    visible: dict[str, str] = {}
    sizes: dict[tuple[str, str], tuple[float, float]] = {}
    for r in dict_rows(conn, load("source_columns")):
        key = (str(r["schema"]), str(r["table"]))
        tables.setdefault(key, {})[str(r["column"])] = Column(
            int(r["position"]), str(r["type"]), bool(r["is_unique"])
        )
        sizes[key] = (float(r["rows"] or 0), float(r["pages"] or 0))
        if r["visible"]:
            visible[key[1]] = key[0]
    return Catalog(tables, visible, sizes)


def column_stats(
    conn: psycopg.Connection[Any], schema: str, table: str, column: str
) -> dict[str, Any] | None:
    """The column's pg_stats row (most common values, their frequencies, the
    histogram's bounds, the share of NULLs), None where the source has none."""
    stats = dict_rows(
        conn, load("column_stats"), {"schema": schema, "table": table, "column": column}
    )
    return stats[0] if stats else None


def sample_values(conn: psycopg.Connection[Any], schema: str, table: str, column: str) -> list[str]:
    """Up to SAMPLE_ROWS values of the column, spread over a big table by a Bernoulli
    sample sized from the planner's row estimate."""
    estimate = dict_rows(
        conn,
        "select greatest(c.reltuples, 0)::float8 as n, c.relkind in ('r', 'm') as sampled "
        "from pg_class c join pg_namespace s on s.oid = c.relnamespace "
        "where s.nspname = %s and c.relname = %s",
        (schema, table),
    )
    n, sampled = (estimate[0]["n"], estimate[0]["sampled"]) if estimate else (0.0, False)
    percent = min(100.0, 100.0 * 4 * SAMPLE_ROWS / n) if n else 100.0
    source = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table))
    if sampled and percent < 100:
        source = sql.SQL("{} tablesample bernoulli ({})").format(source, sql.Literal(percent))
    query = sql.SQL("select {c}::text as v from {t} where {c} is not null limit {n}").format(
        c=sql.Identifier(column), t=source, n=sql.Literal(SAMPLE_ROWS)
    )
    try:
        return [str(r["v"]) for r in dict_rows(conn, query)]
    except psycopg.errors.InsufficientPrivilege:
        return []


RI_LOCKS = (LockClauseStrength.LCS_FORKEYSHARE, LockClauseStrength.LCS_FORSHARE)


def foreign_key_check(query: str) -> bool:
    """Whether `query` is PostgreSQL's own check of a foreign key (ri_triggers.c:
    `SELECT 1 FROM ONLY <table> x WHERE <key> OPERATOR(pg_catalog.=) $1 FOR KEY SHARE
    OF x`), which pg_stat_statements counts as a top-level statement when the
    constraint is deferred (Django makes every foreign key DEFERRABLE INITIALLY
    DEFERRED) and it runs at COMMIT: the server's work for the writes that need it,
    which a replay of those writes makes again, not a client's statement."""
    try:
        parsed = parse_sql(query)
    except ParseError:
        return False
    stmt: Any = parsed[0].stmt if len(parsed) == 1 else None
    if not isinstance(stmt, ast.SelectStmt):
        return False
    tables, locks = stmt.fromClause or (), stmt.lockingClause or ()
    only_x = (
        len(tables) == 1
        and isinstance(tables[0], ast.RangeVar)
        and not tables[0].inh
        and tables[0].alias is not None
        and tables[0].alias.aliasname == "x"
    )
    qualified = (n.name[0] for n in walk(stmt.whereClause) if isinstance(n, ast.A_Expr) and n.name)
    return (
        only_x
        and len(locks) == 1
        and locks[0].strength in RI_LOCKS
        and any(getattr(q, "sval", None) == "pg_catalog" for q in qualified)
    )
