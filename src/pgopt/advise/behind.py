"""The statements behind a finding (pure), from pg_stat_statements read at the start
and at the end of advise's sample.

`commits`: the statements that commit most, for commit-bound. pg_stat_statements
does not say whether a statement ran in a transaction of its own, so each is named
for what it is: a COMMIT (an explicit transaction ends; track_utility counts them),
or a write (INSERT, UPDATE, DELETE, MERGE, COPY FROM, a
data-modifying WITH), which commits on its own
unless it ran between BEGIN and COMMIT. A read commits too, but a transaction
without an xid does not wait for the WAL flush, so reads are not named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pglast import ast, parse_sql
from pglast.enums.parsenodes import TransactionStmtKind
from pglast.parser import ParseError

from ..sqltree import walk
from ..words import flat_query

TOP = 5
STATEMENTS = "advise_statements"  # the query whose rows these read
WRITES = (ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.MergeStmt)


def commit_kind(query: str) -> str | None:
    """ "commit", "write", or None for a statement that makes no commit wait on a flush."""
    try:
        statements = parse_sql(query)
    except ParseError:
        return None
    if len(statements) != 1:
        return None
    stmt = statements[0].stmt
    if isinstance(stmt, ast.TransactionStmt):
        return "commit" if stmt.kind == TransactionStmtKind.TRANS_STMT_COMMIT else None
    if isinstance(stmt, ast.CopyStmt):
        return "write" if stmt.is_from else None
    # a write, or a data-modifying WITH
    return "write" if any(isinstance(n, WRITES) for n in walk(stmt)) else None


SAID = {
    "commit": "a COMMIT: explicit transactions end",
    "write": "a write: its own transaction, unless it runs between BEGIN and COMMIT",
}


def committing(
    before: list[dict[str, Any]], after: list[dict[str, Any]], sample_s: float
) -> list[dict[str, Any]]:
    """The statements that commit most during the sample, most calls first."""
    earlier = {row["queryid"]: int(row["calls"] or 0) for row in before}
    out: list[dict[str, Any]] = []
    for row in after:
        kind = commit_kind(str(row["query"]))
        # a statement first seen during the sample made all its calls in it
        calls = int(row["calls"] or 0) - earlier.get(row["queryid"], 0)
        if kind is None or calls <= 0 or sample_s <= 0:
            continue
        rate = calls / sample_s
        out.append(
            {
                "query": str(row["query"]),
                "query_short": flat_query(str(row["query"]), 60),
                "calls_per_s": round(rate, 2),
                "kind": kind,
                "said": f"{rate:,.0f} calls a second, {SAID[kind]}",
            }
        )
    out.sort(key=lambda s: -s["calls_per_s"])
    return out[:TOP]


# what each `behind` of a rule names, from the statements' rows before and after
BEHIND: dict[str, Callable[[list[dict[str, Any]], list[dict[str, Any]], float], list[Any]]] = {
    "commits": committing
}
