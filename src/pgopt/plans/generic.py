"""A normalized statement's generic plan, as the server makes it for any parameter
values: `EXPLAIN (GENERIC_PLAN)` from PostgreSQL 16; before that, the statement
prepared, `plan_cache_mode = force_generic_plan` for one rolled-back transaction,
and `EXPLAIN EXECUTE` with every parameter NULL (as Dexter does). Plain EXPLAIN:
nothing runs, and a write statement can be explained in a read-only session.

Only statements a plan is made for (SELECT, INSERT, UPDATE, DELETE, MERGE) are
explained; anything else, or what the server refuses, is a PlanError with the
reason in one line.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
from pglast import ast, parse_sql
from pglast.parser import ParseError

from ..errors import first_line
from ..sqltree import PLANNABLE, walk

GENERIC_PLAN_FROM = 160000
PREPARED_NAME = "pgopt_generic_plan"


class PlanError(Exception):
    """Why a statement has no plan here, in one line."""


def parameter_count(query: str) -> int:
    """The highest $n of `query` (0 without parameters); a ParseError if it does not
    parse, a PlanError if it is not one statement a plan is made for."""
    statements = parse_sql(query)
    if len(statements) != 1:
        raise PlanError(f"{len(statements)} statements: explain them one at a time")
    stmt = statements[0].stmt
    if not isinstance(stmt, PLANNABLE):
        raise PlanError(f"a {type(stmt).__name__} has no plan")
    return max((n.number or 0 for n in walk(stmt) if isinstance(n, ast.ParamRef)), default=0)


def makes_a_plan(query: str) -> bool:
    """Whether `query` is a statement a plan is made for: False for BEGIN, SET, DDL and
    the like; True for text pglast cannot parse too (the server then says why not)."""
    try:
        parameter_count(query)
    except PlanError:
        return False
    except ParseError:
        return True
    return True


def generic_plan(conn: psycopg.Connection[Any], query: str) -> dict[str, Any]:
    """The generic plan of `query` (its top node, EXPLAIN's JSON "Plan") on `conn`,
    an autocommit connection; a PlanError says why there is none."""
    try:
        params = parameter_count(query)
    except ParseError as e:
        raise PlanError(f"does not parse: {e}") from None
    text = query.strip().rstrip(";")
    try:
        if conn.info.server_version >= GENERIC_PLAN_FROM:
            row = conn.execute(f"explain (generic_plan, verbose, format json) {text}").fetchone()
        else:
            row = _prepared_plan(conn, text, params)
    except psycopg.Error as e:
        if conn.closed:
            raise
        raise PlanError(first_line(e)) from None
    assert row is not None
    document = row[0] if isinstance(row[0], list) else json.loads(row[0])
    return dict(document[0]["Plan"])


def _prepared_plan(conn: psycopg.Connection[Any], text: str, params: int) -> Any:
    nulls = f"({', '.join(['null'] * params)})" if params else ""
    conn.execute(f"prepare {PREPARED_NAME} as {text}")
    try:
        with conn.transaction() as tx:
            conn.execute("set local plan_cache_mode = force_generic_plan")
            row = conn.execute(
                f"explain (verbose, format json) execute {PREPARED_NAME}{nulls}"
            ).fetchone()
            raise psycopg.Rollback(tx)  # the setting ends with the transaction
        return row
    finally:
        conn.execute(f"deallocate {PREPARED_NAME}")
