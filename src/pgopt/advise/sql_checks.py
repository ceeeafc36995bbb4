"""Statements read with PostgreSQL's own parser (pglast), never with regular
expressions (pure): the named checks a rule may apply to a statement's text
(`filter`), and the rewrites a proof may apply to one (`rewrite`)."""

from __future__ import annotations

from collections.abc import Callable

from pglast import ast, parse_sql
from pglast.enums.lockoptions import LockClauseStrength, LockWaitPolicy
from pglast.parser import ParseError
from pglast.stream import RawStream

from ..sqltree import walk


def locks_rows_without_skip_locked(query: str) -> bool:
    """A SELECT ... FOR UPDATE/SHARE that waits for a locked row (no SKIP LOCKED, no NOWAIT)."""
    try:
        statements = parse_sql(query)
    except ParseError:
        return False
    for raw in statements:
        for node in walk(raw.stmt):
            if (
                isinstance(node, ast.LockingClause)
                and node.waitPolicy == LockWaitPolicy.LockWaitBlock
            ):
                return node.strength != LockClauseStrength.LCS_NONE
    return False


def with_skip_locked(query: str) -> str:
    """`query` with SKIP LOCKED on each locking clause that would wait for a row."""
    (raw,) = parse_sql(query)
    assert raw.stmt is not None
    for node in walk(raw.stmt):
        if isinstance(node, ast.LockingClause) and node.waitPolicy == LockWaitPolicy.LockWaitBlock:
            node.waitPolicy = LockWaitPolicy.LockWaitSkip
    return str(RawStream()(raw.stmt))


def not_for_update_without_skip_locked(query: str) -> bool:
    """Any statement but a SELECT ... FOR UPDATE/SHARE that waits for a locked row."""
    return not locks_rows_without_skip_locked(query)


FILTERS: dict[str, Callable[[str], bool]] = {
    "locks_rows_without_skip_locked": locks_rows_without_skip_locked,
    "not_for_update_without_skip_locked": not_for_update_without_skip_locked,
}
REWRITES: dict[str, Callable[[str], str]] = {"skip_locked": with_skip_locked}
