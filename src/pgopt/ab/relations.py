"""What a copy of some of the source's relations must hold, as PostgreSQL defines
them (read in a read-only session of pgopt's): a partitioned table with its
partitions and a partition with its parent, a view or materialized view with the
relations it reads, a table with the one its foreign keys reference and the
sequences its defaults draw from; and what cannot be copied, with why (a foreign
table, one this role may not read, an extension's own), left out with whatever
needs it, so the rest is copied.

A `--table` pattern that names one relation is resolved as to_regclass reads a
name; any other (`public.*`, a name no relation has) is given to pg_dump as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import psycopg
from pglast import ast, parse_sql
from pglast.parser import ParseError

from ..queries import load
from ..servers.read_only import dict_rows
from ..sqltree import quote_ident, split_qualified

_QUOTED = re.compile(r'"(?:[^"]|"")*"')
_BARE_NAME = re.compile(r"[\w$.]+")


@dataclass(frozen=True)
class Relation:
    name: str  # schema.name, quoted as SQL needs it
    kind: str  # pg_class.relkind
    readable: bool = True
    extension: str | None = None
    needs: tuple[str, ...] = ()  # what it cannot be created without
    asked: tuple[str, ...] = ()  # the names asked that resolve to it


@dataclass(frozen=True)
class CopyList:
    """The `--table` arguments of a copy, and the relations left out with why."""

    tables: tuple[str, ...]
    left_out: dict[str, str] = field(default_factory=dict)
    named: dict[str, str] = field(default_factory=dict)  # a name asked -> its relation

    def why_not(self, name: str) -> str | None:
        """Why the relation `name` (as asked, or as copied) is left out, or None."""
        return self.left_out.get(self.named.get(name, name))

    def schemas_sql(self) -> str:
        """CREATE SCHEMA for the schemas of the relations copied (pg_dump --table
        writes none), public apart."""
        schemas = dict.fromkeys(split_qualified(t)[0] for t in self.tables if _one_relation(t))
        return "".join(
            f"CREATE SCHEMA IF NOT EXISTS {quote_ident(s)};\n" for s in schemas if s != "public"
        )


def read_relations(conn: psycopg.Connection[Any], names: tuple[str, ...]) -> list[Relation]:
    """`names` and what a copy of them needs, read on `conn`; a name that is no
    relation here is not among them."""
    params = {"names": [n for n in names if _one_relation(n)]}
    return [
        Relation(
            r["name"],
            r["kind"],
            r["readable"],
            r["extension"],
            tuple(r["needs"]),
            tuple(r["asked"]),
        )
        for r in dict_rows(conn, load("copy_relations"), params)
    ]


def copy_list(names: tuple[str, ...], relations: list[Relation]) -> CopyList:
    """The relations to copy (and the names no relation answered, as patterns), and
    those left out with why: a relation that cannot be copied, then, until nothing
    changes, whatever needs one left out."""
    left_out: dict[str, str] = {}
    for r in relations:
        why = _why_not(r)
        if why is not None:
            left_out[r.name] = why
    changed = True
    while changed:
        changed = False
        for r in relations:
            missing = [n for n in r.needs if n in left_out]
            if r.name not in left_out and missing:
                left_out[r.name] = f"needs {missing[0]}, which is left out"
                changed = True
    asked = {n for r in relations for n in r.asked}
    patterns = tuple(n for n in names if n not in asked)
    kept = tuple(r.name for r in relations if r.name not in left_out)
    named = {n: r.name for r in relations for n in r.asked}
    return CopyList((*kept, *patterns), left_out, named)


def _why_not(r: Relation) -> str | None:
    if r.kind == "f":
        return "a foreign table: its rows are on another server"
    if r.extension is not None:
        return f"a relation of the extension {r.extension}: install it on the copy's server"
    if not r.readable:
        return "this role may not read it: grant it SELECT to have it copied"
    return None


def _one_relation(name: str) -> bool:
    """Whether `name` reads as one relation's (`[schema.]name`, quoted or not), which
    to_regclass takes without an error: not a pattern."""
    if not _BARE_NAME.fullmatch(_QUOTED.sub("", name)):
        return False  # pattern characters outside quotes, ONLY, a star
    try:
        statements = parse_sql(f"select from {name}")
    except ParseError:
        return False
    stmt: Any = statements[0].stmt
    (relation, *more) = stmt.fromClause or (None,)
    return (
        len(statements) == 1
        and not more
        and isinstance(relation, ast.RangeVar)
        and relation.catalogname is None
        and relation.alias is None
    )
