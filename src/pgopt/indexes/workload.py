"""The statements the advisor weighs (pure): pg_stat_statements' heaviest, as `pgopt
ab` takes them (those making up 90% of the execution time, and every write), or
the statements of a `--queries` file; each one read with PostgreSQL's parser for
what it writes (the table, and the columns an UPDATE sets)."""

from __future__ import annotations

from dataclasses import dataclass

from pglast.parser import ParseError, scan

from ..replay.selection import COVER
from ..source.catalog import SourceStatement
from ..sqltree import tables_read
from ..statement_kind import kind_of

_INDEXED_WRITES = ("insert", "update", "delete", "merge")  # what maintains a table's indexes
MAX_STATEMENTS = 500  # a workload of hundreds (bench/advise_scale.py)
SELECTION_SOURCE = (
    "pgopt ab's selection (--cover): the statements making up this share of the execution "
    "time, and every write"
)


@dataclass(frozen=True)
class Statement:
    """One statement of the workload, with its weight and what it writes."""

    id: str  # q1, q2, ... in order of total time
    query: str
    calls: int
    total_ms: float
    writes: str | None = None  # "insert", "update", "delete", "merge"
    target: str | None = None  # the table written, as the statement names it
    sets: tuple[str, ...] = ()  # the columns an UPDATE sets

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.calls if self.calls else 0.0


def chosen(rows: list[SourceStatement], cover: float = COVER) -> list[Statement]:
    """The statements to weigh, heaviest first, numbered."""
    mine = [r for r in rows if application_statement(r.query)]
    ordered = sorted(mine, key=lambda s: s.total_ms, reverse=True)
    total = sum(s.total_ms for s in ordered) or 1.0
    out: list[Statement] = []
    share = 0.0
    for row in ordered:
        kind = write_of(row.query)
        if (share >= cover and kind[0] is None) or len(out) >= MAX_STATEMENTS:
            continue
        share += row.total_ms / total
        out.append(_statement(len(out) + 1, row.query, row.calls, row.total_ms))
    return out


def application_statement(query: str) -> bool:
    """A statement a plan is made for, on some table outside the catalogs: not a
    utility statement (pg_dump's COPY, EXPLAIN), nor a monitoring query on pg_*, nor
    one that names no table (`select pg_stat_statements_reset()`)."""
    kind = kind_of(query)
    if not kind.parsed:
        return True  # said when it is planned
    if not kind.plannable:
        return False
    names = tables_read(query)
    system = ("pg_", "information_schema.", "pg_catalog.")
    return bool(names) and not all(n.startswith(system) for n in names)


def from_file(text: str) -> list[Statement]:
    """The statements of a `--queries` file, each weighing one call of 1 ms: split
    at each `;` the SQL scanner sees (not one in a string or a comment), or, in a
    file without one, one statement a line; comments and blank parts left out. A
    statement that does not parse is kept, to be refused alone."""
    try:
        tokens = scan(text)
    except ParseError:  # an unterminated string or comment: one statement a line
        tokens = []
    cuts = [t.start for t in tokens if t.name == "ASCII_59"]
    if cuts:
        starts = [0, *(c + 1 for c in cuts)]
        parts = [text[a:b] for a, b in zip(starts, [*cuts, len(text)], strict=True)]
    else:
        parts = text.splitlines()
    statements = [_bare(p) for p in parts]
    return [_statement(i, q, 1, 1.0) for i, q in enumerate((q for q in statements if q), start=1)]


def _bare(part: str) -> str:
    """`part` without its comment lines and surrounding blanks."""
    lines = [line for line in part.splitlines() if not line.strip().startswith("--")]
    return "\n".join(lines).strip()


def _statement(number: int, query: str, calls: int, total_ms: float) -> Statement:
    kind, target, sets = write_of(query)
    return Statement(f"q{number}", query, calls, total_ms, kind, target, sets)


def write_of(query: str) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(what the statement writes, the table, the columns an UPDATE sets), or Nones
    for a read or a statement that does not parse."""
    kind = kind_of(query)
    if not kind.parsed or kind.statements != 1 or kind.writes not in _INDEXED_WRITES:
        return None, None, ()
    return kind.writes, kind.target, kind.sets
