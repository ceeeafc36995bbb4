"""Read what a synthesized workload is made of from the source database, read-only:
its pg_stat_statements, its tables' columns and sizes, each needed column's values
(its pg_stats row, or, where the source has none, up to SAMPLE_ROWS values sampled
from its rows), the largest value of each unique column the workload inserts into,
and how its clients run the statements (source_watch.py: how many statements a
commit, how many sessions, with which protocol).

The session is servers/read_only.py's, so nothing here can write to the user's
database.
Read before pg_dump copies the source, so the copy's own statements are not
taken for the workload.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
from pglast.parser import ParseError
from psycopg import sql

from ..errors import UsageError, first_line
from ..queries import is_own, load
from ..redact import redact_dsn
from ..servers import read_only
from ..servers.read_only import dict_rows
from ..sqltree import tables_read
from .capture import Capture, capture_of
from .catalog import Catalog, Column, SourceStatement
from .draws import INTEGER_TYPES, Pool, pool_from_rows, pool_from_stats
from .log_reader import LogError, read_log
from .param_binding import ColumnUse
from .parameters import needed_columns
from .replayable import foreign_key_check
from .selection import Selection, select
from .source_watch import TRANSACTION_CONTROL, how_clients_ran
from .synthesize import NOT_SAMPLED, Synthesis, synthesize

SAMPLE_ROWS = 200
ENABLE = (
    "add pg_stat_statements to shared_preload_libraries, restart the server, run "
    "'create extension pg_stat_statements' in the database, and run your workload; "
    "or name pgbench scripts ([workload] scripts, --script)"
)


def synthesize_from(
    dsn: str, cover: float, sample_s: float = 0.0, log: Path | None = None
) -> Synthesis:
    """The workload of the source at `dsn`: the statements making up `cover` of its
    execution time and every write, run as its clients ran them during a sample of
    `sample_s` seconds, or as the log capture `log` shows them, with its values; one
    clear error (exit 2) when it cannot be read or holds nothing to replay."""
    where = redact_dsn(dsn)
    nothing = f"nothing in {where}'s pg_stat_statements can be replayed"
    if log is not None:
        nothing = f"no statement of the log capture {log} can be replayed"
    return _replayable(_synthesize(dsn, None, cover, sample_s=sample_s, log=log), nothing)


def scripts_for(dsn: str, queries: list[str]) -> Synthesis:
    """Scripts for `queries` (normalized, with $n), one each, their parameters drawn
    from the source's data as a synthesized workload's are (advise --prove)."""
    statements = [SourceStatement(f"q{i}", q, 1, 1.0) for i, q in enumerate(queries)]
    synthesis = _synthesize(dsn, statements, 1.0)
    if synthesis.skipped:
        first = synthesis.skipped[0]
        raise UsageError(f"cannot replay {first.statement.query}: {first.reason}")
    return synthesis


def statements_naming(dsn: str, table: str) -> Synthesis:
    """Scripts for every statement of the source's pg_stat_statements that names
    `table` (schema.name), weighted by calls (advise --prove on the table's indexes)."""
    return _replayable(
        _synthesize(dsn, None, 1.0, naming=table),
        f"no replayable statement of pg_stat_statements names {table}",
    )


def _replayable(synthesis: Synthesis, nothing: str) -> Synthesis:
    """`synthesis`, or one clear error (exit 2) saying why it holds no script."""
    if not synthesis.scripts:
        reasons = "; ".join(sorted({s.reason for s in synthesis.skipped})[:3])
        raise UsageError(nothing + (f": {reasons}" if reasons else ""))
    return synthesis


def _names(query: str, table: str) -> bool:
    try:
        names = tables_read(query)
    except ParseError:
        return False
    schema, _, name = table.replace('"', "").rpartition(".")
    return any(n == f"{schema}.{name}" or n == name for n in names)


def _synthesize(
    dsn: str,
    statements: list[SourceStatement] | None,
    cover: float,
    naming: str | None = None,
    sample_s: float = 0.0,
    log: Path | None = None,
) -> Synthesis:
    """Scripts for `statements`, or for the source's own pg_stat_statements when None
    (only those naming the table `naming`, when given), from one read-only session on
    the source."""
    where = redact_dsn(dsn)
    try:
        with read_only.connect(dsn, "ab") as conn:
            workload, capture = NOT_SAMPLED, None
            if statements is None:
                if log is None:  # the sample first: the counts come after it
                    workload = how_clients_ran(conn, sample_s)
                statements = _statements(conn, where)
                if log is not None:
                    capture = _capture(conn, log, statements)
            if naming:
                statements = [s for s in statements if _names(s.query, naming)]
            catalog = _catalog(conn)
            captured = frozenset(capture.values) if capture is not None else frozenset()
            selection = select(statements, catalog, cover, captured)
            catalog = _with_largest(conn, selection, catalog)
            pools = _pools(conn, selection, catalog)
    except psycopg.Error as e:
        raise UsageError(f"cannot read {where}: {first_line(e)}") from e
    return synthesize(selection, catalog, pools, workload, tuple(statements), capture)


def _capture(
    conn: psycopg.Connection[Any], log: Path, statements: list[SourceStatement]
) -> Capture:
    """The log capture at `log`, read with the source's log_line_prefix, its statements
    matched to the source's pg_stat_statements."""
    prefix = str(dict_rows(conn, "select current_setting('log_line_prefix') as p")[0]["p"])
    try:
        with log.open(encoding="utf-8", errors="replace", newline="") as f:
            logged = read_log(f, prefix)
    except OSError as e:
        raise UsageError(f"cannot read the log capture {log}: {e.strerror or e}") from None
    except LogError as e:
        raise UsageError(f"{log}: {e}") from None
    capture = capture_of(logged, statements)
    if not capture.values:
        unmatched = next(iter(capture.unmatched), "")
        raise UsageError(
            f"{log}: none of its {capture.statements:,} statements is in the source's "
            "pg_stat_statements (a capture of another database, or statistics reset since)"
            + (f"; the first: {unmatched[:80]}" if unmatched else "")
        )
    return capture


def _statements(conn: psycopg.Connection[Any], where: str) -> list[SourceStatement]:
    installed = dict_rows(conn, "select 1 from pg_extension where extname = 'pg_stat_statements'")
    if not installed:
        raise UsageError(f"{where} has no pg_stat_statements to take the workload from: {ENABLE}")
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
        )
        for r in rows
        if not _not_the_clients(str(r["query"]))
    ]


def _not_the_clients(query: str) -> bool:
    """Transaction control (the replay makes its own), pgopt's own reads of the source,
    PostgreSQL's own checks of deferred foreign keys: no client sent them."""
    return bool(TRANSACTION_CONTROL.match(query)) or is_own(query) or foreign_key_check(query)


def _with_largest(conn: psycopg.Connection[Any], selection: Selection, catalog: Catalog) -> Catalog:
    """The catalog with the largest value of each unique integer column the selected
    statements insert into or update (new keys start above it)."""
    tables = {k: dict(v) for k, v in catalog.tables.items()}
    for candidate in selection.candidates:
        for use in candidate.shape.params.values():
            if not isinstance(use, ColumnUse) or not use.written:
                continue
            key = catalog.key(use.table)
            if key is None:
                continue
            column = tables[key].get(use.column)
            if column is None or not column.unique or column.type not in INTEGER_TYPES:
                continue
            query = sql.SQL("select max({c})::text as m from {s}.{t}").format(
                c=sql.Identifier(use.column), s=sql.Identifier(key[0]), t=sql.Identifier(key[1])
            )
            largest = dict_rows(conn, query)[0]["m"]
            tables[key][use.column] = replace(column, largest=largest)
    return replace(catalog, tables=tables)


def _catalog(conn: psycopg.Connection[Any]) -> Catalog:
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


def _pools(
    conn: psycopg.Connection[Any], selection: Selection, catalog: Catalog
) -> dict[tuple[str, str, str], Pool]:
    pools = {}
    for schema, table, column in sorted(needed_columns(selection, catalog)):
        type_name = catalog.tables[(schema, table)][column].type
        stats = dict_rows(
            conn, load("column_stats"), {"schema": schema, "table": table, "column": column}
        )
        pool = None
        rows = catalog.sizes.get((schema, table), (0.0, 0.0))[0]
        if stats and (stats[0]["mcv"] or stats[0]["bounds"]):
            s = stats[0]
            pool = pool_from_stats(type_name, s["mcv"], s["mcf"], s["bounds"], s["null_frac"], rows)
        if pool is None or not (pool.values or pool.ranges):
            pool = pool_from_rows(_sample(conn, schema, table, column))
        pools[(schema, table, column)] = pool
    return pools


def _sample(conn: psycopg.Connection[Any], schema: str, table: str, column: str) -> list[str]:
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
