"""Walking a statement parsed by PostgreSQL's own parser (pglast): every node under
one, for the checks that read SQL (ab's parameters, advise's locking clauses), and
the tables a statement names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pglast import ast, parse_sql

# the statements a plan is made for (EXPLAIN takes them)
PLANNABLE = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.MergeStmt)


def walk(node: Any) -> Iterator[Any]:
    """Every node under `node` (a node, or a tuple or list of them), itself included."""
    if isinstance(node, tuple | list):
        for item in node:
            yield from walk(item)
    elif isinstance(node, ast.Node):
        yield node
        for name in node:
            yield from walk(getattr(node, name))


def tables_read(query: str) -> tuple[str, ...]:
    """The tables `query` names (schema-qualified where it qualifies them), in order;
    not its CTEs, nor the names a FOR UPDATE OF repeats. Raises pglast's ParseError."""
    names: list[str] = []
    for raw in parse_sql(query):
        ctes = {n.ctename for n in walk(raw.stmt) if isinstance(n, ast.CommonTableExpr)}
        locked = {
            id(rel)
            for clause in walk(raw.stmt)
            if isinstance(clause, ast.LockingClause)
            for rel in clause.lockedRels or ()
        }
        for node in walk(raw.stmt):
            if not isinstance(node, ast.RangeVar) or id(node) in locked:
                continue
            if node.schemaname is None and node.relname in ctes:
                continue
            name = f"{node.schemaname}.{node.relname}" if node.schemaname else str(node.relname)
            if name not in names:
                names.append(name)
    return tuple(names)
