"""What a replay synthesizes from the source (ab --synthesize, advise --prove, the index
proof): in one read-only session on it (servers/read_only.py), how its clients ran
(source/watch.py) or a log capture, its statements, its tables and the values of the
columns the selected statements draw from (source/reader.py), and the keys its clients
wrote during a watch (source/written.py); then the selection
(selection.py) and the synthesis (synthesize.py). One clear error (exit 2) when the
source cannot be read or holds nothing to replay.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
from pglast.parser import ParseError

from ..errors import UsageError, first_line
from ..redact import redact_dsn
from ..servers import read_only
from ..source.catalog import Catalog, SourceStatement
from ..source.reader import (
    column_stats,
    read_capture,
    read_catalog,
    read_statements,
    require_statements,
    sample_values,
    with_largest,
)
from ..source.seen import SeenValues, seen_values
from ..source.taken_log import TakenLog, take_log
from ..source.watch import how_clients_ran
from ..source.written import KeysUnread, written_keys
from ..sqltree import qualified, tables_read
from .param_binding import ColumnUse
from .parameters import needed_columns, written_wanted
from .selection import Selection, select
from .synthesize import NOT_SAMPLED, Synthesis, synthesize
from .values.draws import INTEGER_TYPES, Pool, pool_from_rows, pool_from_stats, pool_from_values


def synthesize_from(
    dsn: str,
    cover: float,
    sample_s: float = 0.0,
    log: Path | None = None,
    capture_s: float = 0.0,
) -> Synthesis:
    """The workload of the source at `dsn`: the statements making up `cover` of its
    execution time and every write, run as its clients ran them during a sample of
    `sample_s` seconds, or as the log capture `log` shows them, or a capture of the
    source's log pgopt takes over `capture_s` seconds, with its values; one clear
    error (exit 2) when it cannot be read or holds nothing to replay."""
    where = redact_dsn(dsn)
    nothing = f"nothing in {where}'s pg_stat_statements can be replayed"
    if log is not None:
        nothing = f"no statement of the log capture {log} can be replayed"
    elif capture_s > 0:
        nothing = f"no statement of {where}'s log over {capture_s:g} s can be replayed"
    synthesis = _synthesize(dsn, None, cover, sample_s=sample_s, log=log, capture_s=capture_s)
    return _replayable(synthesis, nothing)


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
    capture_s: float = 0.0,
) -> Synthesis:
    """Scripts for `statements`, or for the source's own pg_stat_statements when None
    (only those naming the table `naming`, when given), from one read-only session on
    the source (which, for a capture of its log, sets and puts back its log settings:
    source/taken_log.py)."""
    where = redact_dsn(dsn)
    try:
        with read_only.connect(dsn, "ab") as conn:
            workload, capture, seen, since_xid = NOT_SAMPLED, None, None, None
            if statements is None:
                require_statements(conn, where)  # before a watch or capture waits
                literal_calls: tuple[str, ...] = ()
                logged: Path | TakenLog | None = log
                if capture_s > 0:  # the capture first: the counts come after it
                    logged = take_log(conn, capture_s, where)
                elif log is None:  # the sample first, likewise
                    ran = how_clients_ran(conn, sample_s)
                    workload, literal_calls = ran.workload, ran.literal_calls
                    since_xid = ran.since_xid
                statements = read_statements(conn, where)
                if logged is not None:
                    capture = read_capture(conn, logged, statements)
                elif sample_s > 0:
                    seen = seen_values(literal_calls, statements)
            if naming:
                statements = [s for s in statements if _names(s.query, naming)]
            catalog = read_catalog(conn)
            captured = _captured(capture.values if capture is not None else None, seen)
            whole = frozenset(capture.values) if capture is not None else frozenset()
            selection = select(statements, catalog, cover, captured, whole)
            catalog = with_largest(conn, catalog, _new_keys(selection, catalog))
            pools = _pools(conn, selection, catalog)
            written, unread = (
                _written(conn, selection, catalog, since_xid) if since_xid else ({}, {})
            )
    except psycopg.Error as e:
        raise UsageError(f"cannot read {where}: {first_line(e)}") from e
    return synthesize(
        selection, catalog, pools, workload, tuple(statements), capture, seen, written, unread
    )


def _captured(captured: dict[str, Any] | None, seen: SeenValues | None) -> frozenset[str]:
    """The statements whose calls' values are known: a log capture's, or those a watch
    saw often enough."""
    if captured is not None:
        return frozenset(captured)
    return frozenset(seen.values) if seen is not None else frozenset()


def _new_keys(selection: Selection, catalog: Catalog) -> Iterator[tuple[str, str, str]]:
    """(schema, table, column) of each unique integer column the selected statements
    insert into or update: new keys start above its largest value."""
    for candidate in selection.candidates:
        for use in candidate.shape.params.values():
            if not isinstance(use, ColumnUse) or not use.written:
                continue
            key = catalog.key(use.table)
            if key is None:
                continue
            column = catalog.tables[key].get(use.column)
            if column is None or not column.unique or column.type not in INTEGER_TYPES:
                continue
            yield (*key, use.column)


def _written(
    conn: psycopg.Connection[Any], selection: Selection, catalog: Catalog, since_xid: str
) -> tuple[dict[tuple[str, str, str], Pool], dict[str, str]]:
    """The keys of the rows written during the watch, for each column an UPDATE or a
    DELETE finds its rows by, where enough were written (source/written.py); and the
    tables whose keys could not be read, with why."""
    by_table: dict[tuple[str, str], list[str]] = {}
    for schema, table, column in sorted(written_wanted(selection, catalog)):
        by_table.setdefault((schema, table), []).append(column)
    pools, unread = {}, {}
    for (schema, table), columns in by_table.items():
        pages = catalog.sizes.get((schema, table), (0.0, 0.0))[1]
        try:
            found = written_keys(conn, schema, table, columns, since_xid, pages)
        except KeysUnread as e:
            unread[qualified(schema, table)] = str(e)
            continue
        for column, keys in found.items():
            type_name = catalog.tables[(schema, table)][column].type
            pool = pool_from_values(list(keys.values), type_name)
            pools[(schema, table, column)] = replace(pool, origin=keys.origin)
    return pools, unread


def _pools(
    conn: psycopg.Connection[Any], selection: Selection, catalog: Catalog
) -> dict[tuple[str, str, str], Pool]:
    """Where each column the selected statements draw from gets its values: its
    pg_stats row, or, where that holds none, values sampled from its rows."""
    pools = {}
    for schema, table, column in sorted(needed_columns(selection, catalog)):
        type_name = catalog.tables[(schema, table)][column].type
        s = column_stats(conn, schema, table, column)
        pool = None
        rows = catalog.sizes.get((schema, table), (0.0, 0.0))[0]
        if s is not None and (s["mcv"] or s["bounds"]):
            pool = pool_from_stats(type_name, s["mcv"], s["mcf"], s["bounds"], s["null_frac"], rows)
        if pool is None or not (pool.values or pool.ranges):
            pool = pool_from_rows(sample_values(conn, schema, table, column))
        pools[(schema, table, column)] = pool
    return pools
