"""Whether a normalized statement from pg_stat_statements can be replayed, read with
PostgreSQL's own parser (pglast): one SELECT, INSERT, UPDATE or DELETE (no DDL,
utility or session state), touching no system catalog, calling nothing with side
effects outside the database, and every parameter bound to what it stands for
(replay/param_binding.py: a column, a function of one, an array of its values, a
span, an operand, LIMIT or OFFSET), or, from a log capture, given by the capture
(`Shape.unbound`). Otherwise `Shape.refusal` says why. Pure: no server.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pglast import ast, parse_sql
from pglast.parser import ParseError

from ..source.catalog import Table
from ..sqltree import walk
from .param_binding import REPLAYABLE, Binder, ColumnRange, Use, table_of

SIDE_EFFECTS = frozenset(
    {
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "set_config",
        "pg_notify",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_advisory_lock",
        "pg_advisory_xact_lock",
        "pg_advisory_lock_shared",
        "pg_advisory_xact_lock_shared",
        "pg_try_advisory_lock",
        "pg_try_advisory_xact_lock",
        "pg_advisory_unlock",
        "pg_advisory_unlock_all",
        "dblink",
        "dblink_exec",
        "lo_import",
        "lo_export",
        "pg_stat_statements_reset",
        "pg_stat_reset",
    }
)
CATALOG_SCHEMAS = frozenset({"pg_catalog", "information_schema"})


@dataclass(frozen=True)
class Shape:
    kind: str  # select, insert, update, delete, or the parse node of what is refused
    params: dict[int, Use] = field(default_factory=dict)
    tables: tuple[Table, ...] = ()
    refusal: str | None = None  # why it cannot be replayed
    spans: tuple[ColumnRange, ...] = ()
    aggregates: bool = False  # its result is not the rows it reads (sum, count, group by)
    # parameters bound to nothing a column holds: replayable only with the values a
    # log capture holds for them (the refusal says so otherwise)
    unbound: tuple[int, ...] = ()
    target: Table | None = None  # the table an UPDATE or a DELETE changes rows of


def shape_of(query: str, columns_of: Any) -> Shape:
    """The shape of `query`; `columns_of(Table)` gives a table's column names in their
    order (none when the table is unknown), to place unqualified column names and the
    values of an INSERT without a column list."""
    try:
        parsed = parse_sql(query)
    except ParseError as e:
        return Shape("unparsed", refusal=f"PostgreSQL's parser does not read it: {e}")
    if len(parsed) != 1:
        return Shape("several", refusal="several statements in one")
    stmt = parsed[0].stmt
    name = type(stmt).__name__
    if not isinstance(stmt, REPLAYABLE):
        return Shape(name, refusal=_utility_reason(stmt))
    kind = name.removesuffix("Stmt").lower()
    if isinstance(stmt, ast.SelectStmt) and stmt.intoClause is not None:
        return Shape(kind, refusal="SELECT INTO creates a table (DDL)")
    tables = tuple(_tables(stmt))
    if not tables:
        return Shape(kind, refusal="reads no table: a client's check, not the workload")
    if any(t.schema in CATALOG_SCHEMAS or t.name.startswith("pg_") for t in tables):
        return Shape(kind, tables=tables, refusal="reads the system catalog: monitoring")
    calls = sorted(_function_names(stmt) & SIDE_EFFECTS)
    if calls:
        return Shape(kind, tables=tables, refusal=f"calls {', '.join(calls)}: side effects")
    finder = Binder(columns_of)
    finder.visit(stmt, ())
    unbound = sorted(set(_param_numbers(stmt)) - set(finder.params))
    spans = tuple(finder.spans)
    if unbound:
        return Shape(
            kind,
            finder.params,
            tables,
            refusal=f"${unbound[0]} is not compared with a column: no data to draw it from",
            spans=spans,
            aggregates=_aggregates(stmt),
            unbound=tuple(unbound),
        )
    target = table_of(stmt.relation) if isinstance(stmt, ast.UpdateStmt | ast.DeleteStmt) else None
    return Shape(
        kind, finder.params, tables, spans=spans, aggregates=_aggregates(stmt), target=target
    )


def _utility_reason(stmt: Any) -> str:
    if isinstance(stmt, ast.TransactionStmt):
        return "transaction control: each replayed statement is its own transaction"
    if isinstance(stmt, (ast.VariableSetStmt, ast.VariableShowStmt, ast.DiscardStmt)):
        return "session state (SET, SHOW, DISCARD)"
    if isinstance(stmt, (ast.PrepareStmt, ast.ExecuteStmt, ast.DeallocateStmt)):
        return "session state (prepared statements)"
    if isinstance(stmt, ast.CopyStmt):
        return "COPY: pgbench cannot send its data"
    if isinstance(stmt, (ast.ListenStmt, ast.UnlistenStmt, ast.NotifyStmt)):
        return "LISTEN/NOTIFY: session state"
    return f"utility or DDL ({type(stmt).__name__.removesuffix('Stmt')})"


def _tables(stmt: Any) -> Iterator[Table]:
    ctes = {c.ctename for c in walk(stmt) if isinstance(c, ast.CommonTableExpr)}
    for node in walk(stmt):
        if isinstance(node, ast.RangeVar) and not (
            node.schemaname is None and node.relname in ctes
        ):
            yield table_of(node)


def _function_names(stmt: Any) -> set[str]:
    names = set()
    for node in walk(stmt):
        if isinstance(node, ast.FuncCall):
            last: Any = (node.funcname or (None,))[-1]
            if isinstance(last, ast.String):
                names.add(str(last.sval))
    return names


AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every"})


def _aggregates(stmt: Any) -> bool:
    """Whether the rows a call returns are not the rows it reads: an aggregate or a
    GROUP BY in its top level."""
    if not isinstance(stmt, ast.SelectStmt):
        return False
    if stmt.groupClause:
        return True
    return bool(_function_names(stmt.targetList or ()) & AGGREGATES)


def _param_numbers(stmt: Any) -> Iterator[int]:
    for node in walk(stmt):
        if isinstance(node, ast.ParamRef):
            yield int(node.number or 0)
