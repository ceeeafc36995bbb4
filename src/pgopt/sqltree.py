"""Walking a statement parsed by PostgreSQL's own parser (pglast): every node under
one, for the checks that read SQL (ab's parameters, advise's locking clauses), and
the tables a statement names; and a name as PostgreSQL writes it (quote_ident's rule,
with the parser's keywords), so `"Bar"."Foo"` stays the relation it names."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pglast import ast, parse_sql
from pglast.keywords import COL_NAME_KEYWORDS, RESERVED_KEYWORDS, TYPE_FUNC_NAME_KEYWORDS

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


_SIMPLE = re.compile(r"[a-z_][a-z0-9_]*")
# every keyword but the unreserved ones must be quoted (PostgreSQL's quote_identifier)
_QUOTED_KEYWORDS = RESERVED_KEYWORDS | COL_NAME_KEYWORDS | TYPE_FUNC_NAME_KEYWORDS


def quote_ident(name: str) -> str:
    """`name` as PostgreSQL's quote_ident writes it: bare when it is lower case and no
    keyword to quote, else in double quotes (`Id` -> `"Id"`, `user` -> `"user"`)."""
    if _SIMPLE.fullmatch(name) and name not in _QUOTED_KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """`value` as an SQL string literal (standard_conforming_strings on: a backslash is
    itself)."""
    return "'" + value.replace("'", "''") + "'"


def qualified(schema: str, name: str) -> str:
    """A relation's name with its schema, each quoted as it must be (format('%I.%I'))."""
    return f"{quote_ident(schema)}.{quote_ident(name)}"


# a name as pg_dump and quote_ident write it: bare, or in double quotes (which may hold
# anything, a line break too, their own doubled); and a schema-qualified one
WRITTEN_NAME = r'(?:"(?:[^"]|"")*"|[^\s".(),;]+)'
WRITTEN_QUALIFIED = rf"{WRITTEN_NAME}\.{WRITTEN_NAME}"


def unquoted(text: str) -> str | None:
    """The name a quoted or bare identifier stands for, as quote_ident would have
    written it (`"Id"` -> `Id`, `id` -> `id`), or None when `text` is not one."""
    quoted = len(text) > 1 and text[0] == text[-1] == '"'
    name = text[1:-1].replace('""', '"') if quoted else text
    return name if quote_ident(name) == text else None


def split_qualified(name: str) -> tuple[str, str]:
    """(schema, relation) of a name `qualified` wrote, unquoted."""
    stmt: Any = parse_sql(f"select from {name}")[0].stmt
    (relation,) = stmt.fromClause
    return str(relation.schemaname or "public"), str(relation.relname)


def tables_read(query: str) -> tuple[str, ...]:
    """The tables `query` names (schema-qualified where it qualifies them), in order;
    not its CTEs, nor the names a FOR UPDATE OF repeats. Raises pglast's ParseError."""
    return tuple(f"{schema}.{name}" if schema else name for schema, name in _range_vars(query))


def relations_named(query: str) -> tuple[str, ...]:
    """`tables_read`, each name quoted as SQL needs it (`"Bar"."Foo"`, `orders`), for
    to_regclass and pg_dump. Raises pglast's ParseError."""
    return tuple(
        qualified(schema, name) if schema else quote_ident(name)
        for schema, name in _range_vars(query)
    )


def _range_vars(query: str) -> list[tuple[str | None, str]]:
    names: list[tuple[str | None, str]] = []
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
            name = (str(node.schemaname) if node.schemaname else None, str(node.relname))
            if name not in names:
                names.append(name)
    return names
