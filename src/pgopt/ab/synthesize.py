"""A pgbench workload synthesized from the source's pg_stat_statements (pure).

The statements that make up `cover` (90%) of the source's execution time are
taken, heaviest first; each becomes one pgbench script, weighted by its calls,
so the replay runs them in the source's mix. A statement that cannot be replayed
safely (sql_params.Shape.refusal; an INSERT or UPDATE that would write existing
values into a unique column) is skipped with its reason. Each parameter is drawn
per transaction from the data it was compared with (`Pool`, read by
ab/statements.py): the column's most common values at their frequencies and its
histogram (integers uniformly within each bucket, other types at the bounds), or
values sampled from its rows. The draw is a CASE on a uniform number that the
planner folds into one constant, so each replayed statement is planned for its
value, as the application's was.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from ..words import plural
from .sql_params import ColumnUse, Shape, Table, shape_of

COVER = 0.90
MAX_SCRIPTS = 100  # pgbench takes at most 128 scripts
MAX_WEIGHT = 100_000
DRAW = 10_000  # each parameter's draw: a uniform whole number from 1 to DRAW
INTEGER_TYPES = frozenset({"smallint", "integer", "bigint"})
LIMIT_VALUES = {"limit": "10", "offset": "0"}  # pg_stat_statements keeps no constants


@dataclass(frozen=True)
class SourceStatement:
    queryid: str
    query: str
    calls: int
    total_ms: float


@dataclass(frozen=True)
class Column:
    position: int
    type: str  # format_type: 'integer', 'text', 'numeric(10,2)', ...
    unique: bool  # in some unique index: an INSERT of an existing value may collide


@dataclass(frozen=True)
class Catalog:
    """The source's tables: (schema, name) -> columns; unqualified names go to the
    schema where the source's search path finds them."""

    tables: dict[tuple[str, str], dict[str, Column]]
    visible: dict[str, str]  # name -> schema

    def key(self, table: Table) -> tuple[str, str] | None:
        schema = table.schema or self.visible.get(table.name)
        return (schema, table.name) if schema and (schema, table.name) in self.tables else None

    def columns(self, table: Table) -> dict[str, Column]:
        key = self.key(table)
        return self.tables[key] if key else {}

    def column_names(self, table: Table) -> list[str]:
        """In the table's order: an INSERT without a column list fills them so."""
        columns = self.columns(table)
        return sorted(columns, key=lambda name: columns[name].position)


@dataclass(frozen=True)
class Pool:
    """Where a column's values come from: (value, weight) pairs and, for integers,
    (low, high, weight) ranges drawn uniformly; weights need not sum to 1."""

    values: tuple[tuple[str, float], ...]
    ranges: tuple[tuple[int, int, float], ...]
    origin: str  # 'pg_stats' or 'sampled rows'


@dataclass(frozen=True)
class Candidate:
    statement: SourceStatement
    shape: Shape
    time_share: float  # of the source's execution time


@dataclass(frozen=True)
class Skipped:
    statement: SourceStatement
    time_share: float
    reason: str


@dataclass(frozen=True)
class Selection:
    candidates: tuple[Candidate, ...]
    skipped: tuple[Skipped, ...]
    chosen_share: float  # of the source's time, in the statements looked at
    capped: bool  # MAX_SCRIPTS stopped the selection before `cover`
    cover: float


def select(statements: list[SourceStatement], catalog: Catalog, cover: float = COVER) -> Selection:
    """The statements that make up `cover` of the execution time, replayable or not."""
    ordered = sorted(statements, key=lambda s: s.total_ms, reverse=True)
    total = sum(s.total_ms for s in ordered) or 1.0
    candidates: list[Candidate] = []
    skipped: list[Skipped] = []
    share = 0.0
    for statement in ordered:
        if share >= cover or len(candidates) >= MAX_SCRIPTS:
            break
        own = statement.total_ms / total
        share += own
        shape = shape_of(statement.query, catalog.column_names)
        reason = shape.refusal or _write_refusal(shape, catalog)
        if reason:
            skipped.append(Skipped(statement, own, reason))
        else:
            candidates.append(Candidate(statement, shape, own))
    return Selection(tuple(candidates), tuple(skipped), share, share < cover, cover)


def _write_refusal(shape: Shape, catalog: Catalog) -> str | None:
    for table in shape.tables:
        if catalog.key(table) is None:
            return f"table {table.name} is not in the source (temporary, or a view's)"
    for use in shape.params.values():
        if not isinstance(use, ColumnUse):
            continue
        column = catalog.columns(use.table).get(use.column)
        if column is None:
            return f"column {use.table.name}.{use.column} is not in the source"
        if use.written and column.unique:
            return (
                f"writes {use.table.name}.{use.column}, which is unique: values drawn from "
                "the data would collide"
            )
    return None


def needed_columns(selection: Selection, catalog: Catalog) -> set[tuple[str, str, str]]:
    """(schema, table, column) of every parameter the candidates draw from the data."""
    out = set()
    for candidate in selection.candidates:
        for use in candidate.shape.params.values():
            if isinstance(use, ColumnUse):
                key = catalog.key(use.table)
                assert key is not None
                out.add((*key, use.column))
    return out


@dataclass(frozen=True)
class Script:
    name: str  # q01, q02, ...: the file is NAME.sql
    weight: int
    text: str
    statement: SourceStatement
    time_share: float


@dataclass(frozen=True)
class Synthesis:
    scripts: tuple[Script, ...]
    skipped: tuple[Skipped, ...]
    chosen_share: float
    capped: bool
    cover: float

    @property
    def replayed_share(self) -> float:
        return sum(s.time_share for s in self.scripts)


def synthesize(
    selection: Selection, catalog: Catalog, pools: dict[tuple[str, str, str], Pool]
) -> Synthesis:
    """One script per candidate whose parameters all have values."""
    scripts: list[Script] = []
    skipped = list(selection.skipped)
    most = max((c.statement.calls for c in selection.candidates), default=1)
    scale = min(1.0, MAX_WEIGHT / most)
    for candidate in selection.candidates:
        empty = _empty_column(candidate.shape, catalog, pools)
        if empty:
            skipped.append(
                Skipped(candidate.statement, candidate.time_share, f"no values of {empty}")
            )
            continue
        name = f"q{len(scripts) + 1:02d}"
        text = _script(name, candidate, catalog, pools)
        weight = max(1, round(candidate.statement.calls * scale))
        scripts.append(Script(name, weight, text, candidate.statement, candidate.time_share))
    skipped.sort(key=lambda s: s.time_share, reverse=True)
    return Synthesis(
        tuple(scripts), tuple(skipped), selection.chosen_share, selection.capped, selection.cover
    )


def _empty_column(shape: Shape, catalog: Catalog, pools: dict[Any, Pool]) -> str | None:
    for use in shape.params.values():
        if isinstance(use, ColumnUse):
            pool = pools.get((*catalog.key(use.table), use.column))  # type: ignore[misc]
            if pool is None or not (pool.values or pool.ranges):
                return f"{use.table.name}.{use.column} (an empty table, or no statistics)"
    return None


def _script(name: str, candidate: Candidate, catalog: Catalog, pools: dict[Any, Pool]) -> str:
    st = candidate.statement
    lines = [
        f"-- {name}: {candidate.time_share:.1%} of the source's execution time, "
        f"{plural(st.calls, 'call')}, {st.total_ms / max(st.calls, 1):.3f} ms each "
        f"(pg_stat_statements queryid {st.queryid})",
    ]
    values: dict[int, str] = {}
    for n, use in sorted(candidate.shape.params.items()):
        if isinstance(use, str):
            values[n] = LIMIT_VALUES[use]
            lines.append(f"-- ${n}: {use.upper()} {values[n]} (assumed: no value is kept)")
            continue
        key = catalog.key(use.table)
        assert key is not None
        pool = pools[(*key, use.column)]
        column = catalog.tables[key][use.column]
        lines.append(f"-- ${n}: {use.table.name}.{use.column} ({column.type}), from {pool.origin}")
        lines.append(f"\\set pgopt_r{n} random(1, {DRAW})")
        if column.type in INTEGER_TYPES:
            lines.append(f"\\set pgopt_p{n} {_integer_draw(pool, f':pgopt_r{n}')}")
            values[n] = f":pgopt_p{n}"
        else:
            values[n] = f"({_literal_draw(pool, f':pgopt_r{n}')})::{column.type}"
    body = re.sub(r"\$(\d+)(?!\d)", lambda m: values[int(m.group(1))], st.query.strip())
    lines.append(body.rstrip(";") + ";")
    return "\n".join(lines) + "\n"


def _thresholds(weights: list[float]) -> list[int]:
    """Cumulative cut points on 1..DRAW; an item whose weight rounds away gets none."""
    total = sum(weights)
    cuts, running = [], 0.0
    for w in weights:
        running += w
        cuts.append(round(running / total * DRAW))
    cuts[-1] = DRAW
    return cuts


def _integer_draw(pool: Pool, r: str) -> str:
    """A pgbench expression: each value or range with its weight."""
    items = [(v, w) for v, w in pool.values] + [
        (f"random({lo}, {hi})", w) for lo, hi, w in pool.ranges
    ]
    return _case(r, [(int(v) if v.lstrip("-").isdigit() else v, w) for v, w in items])


def _literal_draw(pool: Pool, r: str) -> str:
    return _case(r, [(_quote(v), w) for v, w in pool.values])


def _case(r: str, items: list[tuple[Any, float]]) -> str:
    if len(items) == 1:
        return str(items[0][0])
    cuts = _thresholds([w for _, w in items])
    arms, last = [], 0
    for (value, _), cut in zip(items[:-1], cuts[:-1], strict=True):
        if cut > last:
            arms.append(f"when {r} <= {cut} then {value}")
            last = cut
    return f"case {' '.join(arms)} else {items[-1][0]} end"


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def pool_from_stats(
    type_name: str,
    mcv: list[str] | None,
    mcf: list[float] | None,
    bounds: list[str] | None,
    null_frac: float,
) -> Pool:
    """A column's values from its pg_stats row: most common values at their
    frequencies; the rest of the rows spread evenly over the histogram, whose
    buckets hold equal shares (integers drawn within a bucket, others at its bounds)."""
    common = list(zip(mcv or [], mcf or [], strict=False))
    rest = max(0.0, 1.0 - null_frac - sum(f for _, f in common))
    bounds = bounds or []
    if type_name in INTEGER_TYPES and len(bounds) >= 2:
        edges = [int(b) for b in bounds]
        share = rest / (len(edges) - 1)
        ranges = tuple((lo, hi, share) for lo, hi in itertools.pairwise(edges))
        return Pool(tuple(common), ranges, "pg_stats")
    spread = tuple((b, rest / len(bounds)) for b in bounds) if bounds and rest > 0 else ()
    return Pool(tuple(common) + spread, (), "pg_stats")


def pool_from_rows(values: list[str]) -> Pool:
    return Pool(tuple((v, 1.0) for v in values), (), "sampled rows")
