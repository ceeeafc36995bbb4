"""Index candidates from scans (pure): the columns compared by equality first (the
most distinct first), then one range column or the sort keys with their
directions; an INCLUDE variant where an index-only scan would serve; a partial
variant for a constant predicate; expression keys as they are (`lower(email)`);
GIN with pg_trgm for LIKE. A candidate an existing index already covers (with the
same operator classes and collations) is not offered: it is set aside with the
name of the index that covers it. Each candidate has a size estimated from the
table and pg_stats. A statement that compares more than MAX_EQUALITY columns by
equality gets the MAX_EQUALITY most distinct of them, and the most distinct alone,
as a DBA would index it (PostgreSQL takes at most 32 keys, and past the most
selective few a key mostly adds size).

A value written in a statement (`user_id = 1`) is a constant predicate only with
evidence that it is one: pg_stat_statements kept it in its normalized text (which
replaces every value that varies by $n), or its column has few values (pg_stats'
n_distinct, a status). Otherwise, as a `--queries` file's example usually is, it
stands for a parameter: `posts (user_id, blog_id)`, not `posts (blog_id) WHERE
user_id = 1`, an index for one user.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pglast import parse_sql

from ..sqltree import quote_ident, split_qualified
from .scans import Key, Scan

PAGE = 8192
BTREE_FILL = 0.9  # btree's default leaf fillfactor
MAX_INCLUDE = 3  # beyond this a covering index copies most of the row
MAX_EQUALITY = 3  # equality keys of a composite, the most distinct first
FEW_VALUES = 10  # an enumeration's values (a status, a kind): a partial index per value


@dataclass(frozen=True)
class ExistingIndex:
    name: str
    table: str  # schema.name
    keys: tuple[Key, ...]
    include: tuple[str, ...] = ()  # column names, unquoted
    predicate: str | None = None
    method: str = "btree"
    valid: bool = True
    # each key's operator class and collation where not the default (None where it is)
    opclasses: tuple[str | None, ...] = ()
    collations: tuple[str | None, ...] = ()


def key_classes(definition: str) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
    """(each key's operator class, each key's collation) of an index, from its
    `pg_get_indexdef`, which names them only where they are not the key's default
    (`email varchar_pattern_ops`, `name COLLATE "C"`); None where it does not."""
    stmt: Any = parse_sql(definition)[0].stmt  # an IndexStmt
    elems = stmt.indexParams
    opclasses = tuple(str(e.opclass[-1].sval) if e.opclass else None for e in elems)
    collations = tuple(str(e.collation[-1].sval) if e.collation else None for e in elems)
    return opclasses, collations


@dataclass(frozen=True)
class ColumnStats:
    width: float = 8.0  # pg_stats.avg_width
    distinct: float = 0.0  # pg_stats.n_distinct: negative = a fraction of the rows
    type: str = ""  # pg_type's name (of a domain's base type): `varchar`, `int4`


@dataclass(frozen=True)
class TableFacts:
    """One table as the advisor needs it, read from the live server."""

    name: str  # schema.name, each part as quote_ident writes it
    rows: float
    pages: int
    columns: dict[str, ColumnStats] = field(default_factory=dict)
    indexes: tuple[ExistingIndex, ...] = ()
    inserts: int = 0  # since the statistics began
    updates: int = 0
    hot_updates: int = 0
    deletes: int = 0

    def distinct(self, column: str) -> float:
        d = self.columns.get(column, ColumnStats()).distinct
        return -d * self.rows if d < 0 else d

    @property
    def row_width(self) -> float:
        return sum(c.width for c in self.columns.values()) + 24  # + the heap tuple header


@dataclass(frozen=True)
class Candidate:
    table: str  # schema.name, each part as quote_ident writes it
    keys: tuple[Key, ...]
    include: tuple[str, ...] = ()  # column names, unquoted
    predicate: str | None = None
    method: str = "btree"
    opclass: str | None = None  # gin_trgm_ops

    @property
    def identity(self) -> tuple[Any, ...]:
        return (self.table, self.keys, self.include, self.predicate, self.method)

    @property
    def columns(self) -> tuple[str, ...]:
        out: list[str] = []
        for key in self.keys:
            out.extend(c for c in key.columns if c not in out)
        out.extend(c for c in self.include if c not in out)
        return tuple(out)

    def name(self) -> str:
        """A name as PostgreSQL would make it: table_columns_idx, at most 63 bytes
        (unquoted: quote_ident it in SQL)."""
        table = split_qualified(self.table)[1]
        parts = ["_".join(k.columns) for k in self.keys]
        suffix = "trgm_idx" if self.opclass else ("part_idx" if self.predicate else "idx")
        if self.include:
            suffix = "cov_" + suffix
        base = f"{table}_{'_'.join(parts)}"[: 63 - len(suffix) - 1]
        return f"{base}_{suffix}"

    def definition(self) -> str:
        """`USING btree (customer_id, placed_at DESC) INCLUDE (total) WHERE ...`."""
        keys = []
        for k in self.keys:
            text = k.expr if k.is_column else f"({k.expr})"
            if self.opclass:
                text += f" {self.opclass}"
            keys.append(text + (" DESC" if k.desc else ""))
        out = f"USING {self.method} ({', '.join(keys)})"
        if self.include:
            out += f" INCLUDE ({', '.join(quote_ident(c) for c in self.include)})"
        if self.predicate:
            out += f" WHERE {self.predicate}"
        return out

    def ddl(self, *, concurrently: bool = True) -> str:
        how = "CONCURRENTLY " if concurrently else ""
        return f"CREATE INDEX {how}{quote_ident(self.name())} ON {self.table} {self.definition()};"


@dataclass(frozen=True)
class Covered:
    candidate: Candidate
    by: str  # the existing index


def candidates_for(
    scan: Scan, table: TableFacts, trigram: bool, *, constant_literals: bool
) -> tuple[list[Candidate], list[Covered]]:
    """The candidates of one scan, and those an existing index already covers.
    `constant_literals`: the values written in the statements are the same in every
    call (pg_stat_statements' normalized text kept them), not examples."""
    written, constants, constant_columns = _literals(scan, table, constant_literals)
    equality = _ordered_equality([*scan.equality, *written], table)
    made: list[Candidate] = []
    if len(equality) > MAX_EQUALITY:
        made.append(Candidate(scan.qualified, (equality[0],)))
        equality = equality[:MAX_EQUALITY]
    if equality or scan.ranges or scan.sort:
        if scan.sort:
            keys = (*equality, *[k for k in scan.sort if k not in equality])
        else:
            keys = (*equality, *scan.ranges[:1])
        plain = Candidate(scan.qualified, tuple(keys))
        made.append(plain)
        if constants:
            made.append(Candidate(scan.qualified, tuple(keys), predicate=" AND ".join(constants)))
        include = [c for c in scan.output if c not in plain.columns]
        if 0 < len(include) <= MAX_INCLUDE and len(table.columns) > len(plain.columns) + len(
            include
        ):
            made.append(Candidate(scan.qualified, tuple(keys), tuple(include)))
    elif constants:
        columns = list(dict.fromkeys(constant_columns))
        made.append(Candidate(scan.qualified, tuple(Key(quote_ident(c), (c,)) for c in columns)))
    if trigram:
        for key in scan.like:
            if key.is_column:
                made.append(Candidate(scan.qualified, (key,), method="gin", opclass="gin_trgm_ops"))
    elif scan.like:
        made.extend(Candidate(scan.qualified, (k,)) for k in scan.like[:1] if k.is_column)
    fresh, covered = [], []
    for c in made:
        by = covering_index(c, table.indexes)
        if by is None:
            fresh.append(c)
        else:
            covered.append(Covered(c, by))
    return fresh, covered


def _literals(
    scan: Scan, table: TableFacts, constant_literals: bool
) -> tuple[list[Key], list[str], list[str]]:
    """(the keys compared with an example value, as a parameter would be; the constant
    predicates; their columns): a value written in the statement is constant when
    `constant_literals` says so or its columns have few values."""
    examples, constants, columns = [], list(scan.constants), list(scan.constant_columns)
    for key, predicate in scan.literals:
        if constant_literals or all(0 < table.distinct(c) <= FEW_VALUES for c in key.columns):
            constants.append(predicate)
            columns.extend(key.columns)
        else:
            examples.append(key)
    return examples, constants, columns


def _ordered_equality(keys: list[Key], table: TableFacts) -> list[Key]:
    """Equality keys once each, the most distinct first (plain columns before
    expressions of the same distinctness)."""
    unique = list(dict.fromkeys(keys))
    return sorted(
        unique, key=lambda k: (-max(table.distinct(c) for c in k.columns), not k.is_column)
    )


def covering_index(candidate: Candidate, existing: tuple[ExistingIndex, ...]) -> str | None:
    """The name of a valid existing index that serves what `candidate` would: the
    same method, no predicate of its own (or the same one), and the candidate's
    keys as its leading keys (equality keys in any order among themselves; the
    directions all the same or all reversed; the same operator classes and
    collations: a `varchar_pattern_ops` index serves LIKE 'x%', not a sort), its
    INCLUDE columns among its own."""
    for index in existing:
        if not index.valid or index.method != candidate.method:
            continue
        if index.predicate is not None and index.predicate != candidate.predicate:
            continue
        if len(index.keys) < len(candidate.keys):
            continue
        n = len(candidate.keys)
        opclasses = [*index.opclasses, *[None] * n][:n]
        if opclasses != [candidate.opclass] * n or any(index.collations[:n]):
            continue
        lead = index.keys[:n]
        in_order = [k.expr for k in lead] == [k.expr for k in candidate.keys]
        equal_set = sorted(k.expr for k in lead) == sorted(k.expr for k in candidate.keys)
        if not in_order and (not equal_set or any(k.desc for k in candidate.keys)):
            continue
        same = all(a.desc == b.desc for a, b in zip(lead, candidate.keys, strict=True))
        reversed_ = all(a.desc != b.desc for a, b in zip(lead, candidate.keys, strict=True))
        if not (same or reversed_):
            continue
        held = {c for k in index.keys for c in k.columns} | set(index.include)
        if not set(candidate.include) <= held:
            continue
        return index.name
    return None


def estimated_bytes(candidate: Candidate, table: TableFacts, selectivity: float = 1.0) -> int:
    """A btree's size from the rows and pg_stats' average widths: per entry an 8-byte
    tuple header, the keys aligned to 8, a 4-byte line pointer, leaves 90% full. A
    GIN trigram index: about one 6-byte posting per character of the value."""
    rows = max(table.rows, 0.0) * selectivity
    widths = sum(table.columns.get(c, ColumnStats()).width for c in candidate.columns)
    if candidate.method == "gin":
        per_row = (widths + 2) * 6
        return int(math.ceil(rows * per_row / PAGE + 1) * PAGE)
    entry = 8 * math.ceil((8 + widths) / 8) + 4
    pages = math.ceil(rows * entry / (PAGE * BTREE_FILL - 24)) + 1
    return int(pages * PAGE)
