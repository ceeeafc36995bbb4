"""The draw of each parameter of a statement to replay (pure): which rule of
draws.py serves each $n, from the statement's shape, the source's catalog and
its columns' values, with the assumption each one makes; and the keys (sequences
in the copy) that new values of unique columns come from."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..source.catalog import Catalog, SourceStatement, Table
from .param_binding import ColumnUse, Operand
from .replayable import shape_of
from .selection import Candidate, Selection
from .values.draws import (
    ASSUMED,
    INTEGER_TYPES,
    ArrayOf,
    Assumed,
    Draw,
    Fixed,
    FromCalls,
    FromPool,
    NewKey,
    Pool,
    RangeDraw,
    Reuse,
    pool_from_values,
    rows_per_value,
)

KEYS_SCHEMA = "pgopt_replay"  # the copy's sequences of new keys
DEFAULT_ROWS = 10  # a range's rows per call, when nothing says more
INDEX_BLOCKS = 3  # blocks a call spends descending an index, not reading the range
SCANNED = 0.5  # blocks a call of at least this share of the table's pages: a full scan
WRITTEN = 8  # values drawn for a written column that no statement compares
MAX_ARRAY = 100  # values in an array parameter drawn from the data
CAPTURED_CALLS = 100  # captured calls whose values are drawn together, at most


@dataclass(frozen=True)
class Key:
    """A sequence the copy needs: new values of a unique integer column."""

    sequence: str
    start: int


def new_key(use: ColumnUse, catalog: Catalog) -> bool:
    column = catalog.columns(use.table).get(use.column)
    return use.written and column is not None and column.unique


class Sizing(NamedTuple):
    """A range's rows per call, where that figure comes from, and whether it is a
    guess the fidelity check cannot verify."""

    rows: float
    why: str
    assumed: bool = False


def _span_rows(
    candidate: Candidate,
    span_table: Table,
    column: str,
    catalog: Catalog,
    everything: tuple[SourceStatement, ...],
) -> Sizing:
    """The rows a call of the range should read, and where that figure comes from."""
    st = candidate.statement
    if not candidate.shape.aggregates and st.rows_per_call >= 1:
        return Sizing(
            st.rows_per_call, f"{st.rows_per_call:.3g} rows a call, as the source's calls"
        )
    alike = []
    for other in everything:
        shape = shape_of(other.query, catalog.column_names)
        if shape.aggregates or other.rows_per_call < 1:
            continue
        if any(s.table == span_table and s.column == column for s in shape.spans):
            alike.append(other.rows_per_call)
    if alike:
        rows = statistics.median(alike)
        return Sizing(
            rows,
            f"{rows:.3g} rows a call, as the source's other ranges of {span_table.shown}."
            f"{column} returned (this one aggregates: its result is not what it reads)",
        )
    per_page = catalog.rows_per_page(span_table)
    pages = catalog.pages(span_table)
    scanned = pages > 0 and st.blocks_per_call >= SCANNED * pages
    if per_page and st.blocks_per_call > INDEX_BLOCKS and not scanned:
        rows = (st.blocks_per_call - INDEX_BLOCKS) * per_page
        return Sizing(
            rows,
            f"{rows:.3g} rows a call, from the source's {st.blocks_per_call:.3g} blocks a "
            f"call at {per_page:.3g} rows a page",
        )
    if scanned:
        return Sizing(
            DEFAULT_ROWS,
            f"{DEFAULT_ROWS} rows a call, assumed: the source's calls read the whole table "
            f"({st.blocks_per_call:.3g} blocks a call of its {pages:.3g} pages), so neither "
            "their rows nor their blocks tell how many rows a range holds",
            True,
        )
    return Sizing(DEFAULT_ROWS, f"{DEFAULT_ROWS} rows a call (assumed: nothing tells)", True)


def draws_of(
    candidate: Candidate,
    catalog: Catalog,
    pools: dict[tuple[str, str, str], Pool],
    keys: dict[str, Key],
    everything: tuple[SourceStatement, ...],
    reuse: dict[int, tuple[str, str]] | None = None,
    captured: list[dict[int, str | None]] | None = None,
    captured_from: str = "the log capture",
    written: dict[tuple[str, str, str], Pool] | None = None,
) -> tuple[dict[int, Draw], dict[int, str]]:
    """Each parameter's draw and its note; `reuse`: n -> (variable, why), a value an
    earlier statement of the transaction drew; `captured`: the values `captured_from`
    (a log capture, a watch) holds, per call (drawn at their frequencies, where a
    value may be used again); `written`: the keys of the rows written during a watch,
    per column, which an UPDATE or a DELETE of the table draws its keys from."""
    target = catalog.key(candidate.shape.target) if candidate.shape.target else None
    if written and target is not None:
        pools = {**pools, **{k: p for k, p in written.items() if k[:2] == target}}
    draws: dict[int, Draw] = {}
    notes: dict[int, str] = {}
    for n, (variable, why) in (reuse or {}).items():
        draws[n], notes[n] = Reuse(variable), why
    if captured:
        _together(candidate, catalog, captured, captured_from, draws, notes)
        _captured(candidate, catalog, captured, captured_from, draws, notes)
    for span in candidate.shape.spans:
        if span.low in draws:
            continue
        key = catalog.key(span.table)
        assert key is not None
        column = catalog.tables[key][span.column]
        pool = pools[(*key, span.column)]
        if column.type in INTEGER_TYPES and pool.ranges:
            sized = _span_rows(candidate, span.table, span.column, catalog, everything)
            draws[span.low] = RangeDraw(
                pool, column.type, sized.rows, span.high, assumed=sized.assumed
            )
            notes[span.low] = (
                f"range of {span.table.column_shown(span.column)} from {pool.origin}: {sized.why}"
            )
            notes[span.high] = f"the range's high end: ${span.low} + its width - 1"
    drawn_highs = {s.high for s in candidate.shape.spans if s.low in draws}
    for n, use in sorted(candidate.shape.params.items()):
        if n in draws or n in drawn_highs:
            continue
        if isinstance(use, str):
            draws[n], notes[n] = _limit(use, candidate)
        elif isinstance(use, Operand):
            draws[n] = Assumed(*ASSUMED)
            notes[n] = (
                f"combined with {use.table.column_shown(use.column)} ({use.operator}): no value is "
                f"kept; assumed {ASSUMED[0]} to {ASSUMED[1]}"
            )
        elif use.array:
            draws[n], notes[n] = _array(use, candidate, catalog, pools, keys)
        elif new_key(use, catalog):
            draws[n], notes[n] = _key(use, catalog, keys)
        else:
            key = catalog.key(use.table)
            assert key is not None
            column = catalog.tables[key][use.column]
            pool = pools[(*key, use.column)]
            note = f"{use.table.column_shown(use.column)} ({column.type}), from {pool.origin}"
            if use.written and column.type not in INTEGER_TYPES and len(pool.values) > WRITTEN:
                # a value written is work by its size, not by which it is: a few of the
                # column's values keep the statement's text small
                pool = replace(pool, values=_spread(pool.values, WRITTEN))
                note += f", {WRITTEN} of them (what is written, not compared)"
            draws[n], notes[n] = FromPool(pool, column.type), note
    return draws, notes


def _array(
    use: ColumnUse,
    candidate: Candidate,
    catalog: Catalog,
    pools: dict[tuple[str, str, str], Pool],
    keys: dict[str, Key],
) -> tuple[Draw, str]:
    """An array of the column's values: as many as the source's calls wrote rows (an
    INSERT of many rows), or as make a call read its rows (`= ANY($1)`)."""
    st = candidate.statement
    element: FromPool | NewKey
    if new_key(use, catalog):
        element, note = _key(use, catalog, keys)
    else:
        key = catalog.key(use.table)
        assert key is not None
        column = catalog.tables[key][use.column]
        pool = pools[(*key, use.column)]
        if use.written and column.type not in INTEGER_TYPES and len(pool.values) > WRITTEN:
            pool = replace(pool, values=_spread(pool.values, WRITTEN))
        element = FromPool(pool, column.type)
        note = f"{use.table.column_shown(use.column)} ({column.type}), from {pool.origin}"
    if use.written:
        length = max(1, min(MAX_ARRAY, round(st.rows_per_call)))
        why = f"{length} a call, as the source's calls wrote {st.rows_per_call:.3g} rows"
    elif isinstance(element, FromPool) and not candidate.shape.aggregates:
        per_value = rows_per_value(element.pool)
        wanted = st.rows_per_call / per_value if per_value > 0 else 1.0
        length = max(1, min(MAX_ARRAY, round(wanted)))
        why = f"{length} a call, so that a call reads the source's {st.rows_per_call:.3g} rows"
    else:
        length = 10
        why = "10 a call (assumed: nothing tells how many)"
    return ArrayOf(element, length), f"an array of {note}: {why}"


def _together(
    candidate: Candidate,
    catalog: Catalog,
    captured: list[dict[int, str | None]],
    captured_from: str,
    draws: dict[int, Draw],
    notes: dict[int, str],
) -> None:
    """The parameters drawn as one captured call had them: the arrays of one
    statement (an UNNEST's arrays keep one length) and those no column holds."""
    uses = candidate.shape.params
    arrays = [n for n, u in uses.items() if isinstance(u, ColumnUse) and u.array]
    if any(new_key(uses[n], catalog) for n in arrays):  # type: ignore[arg-type]
        arrays = []  # new keys are made, not captured: these arrays are drawn
    together = sorted(set(arrays) | set(candidate.shape.unbound))
    calls = [c for c in captured if all(n in c for n in together)]
    if not together or not calls:
        return
    step = max(1, len(calls) // CAPTURED_CALLS)
    chosen = calls[::step][:CAPTURED_CALLS]
    selector = together[0]
    for n in together:
        draws[n] = FromCalls(tuple(c.get(n) for c in chosen), selector)
        notes[n] = (
            f"as one of {len(chosen)} calls from {captured_from} (of {len(captured):,}), "
            f"drawn with the call by ${selector}'s draw"
        )


def _captured(
    candidate: Candidate,
    catalog: Catalog,
    captured: list[dict[int, str | None]],
    captured_from: str,
    draws: dict[int, Draw],
    notes: dict[int, str],
) -> None:
    """Draws from the captured values: each range's low end and its width as the calls
    had them, every other parameter but a new key from its values (a unique column's
    captured values would collide with the rows the source inserted)."""
    for span in candidate.shape.spans:
        if span.low in draws:
            continue
        key = catalog.key(span.table)
        assert key is not None
        column_type = catalog.tables[key][span.column].type
        pairs = [(c.get(span.low), c.get(span.high)) for c in captured]
        bounds = [(int(lo), int(hi)) for lo, hi in pairs if lo and hi and _whole(lo) and _whole(hi)]
        if column_type not in INTEGER_TYPES or not bounds:
            continue
        width = max(1, round(statistics.median(hi - lo + 1 for lo, hi in bounds)))
        pool = pool_from_values([str(lo) for lo, _ in bounds], column_type, captured_from)
        draws[span.low] = RangeDraw(pool, column_type, 0.0, span.high, width)
        notes[span.low] = f"range of {span.table.column_shown(span.column)} from {pool.origin}"
        notes[span.high] = f"the range's high end: ${span.low} + {width - 1}, as captured"
    spans = {s.high for s in candidate.shape.spans if s.low in draws}
    for n, use in sorted(candidate.shape.params.items()):
        if n in draws or n in spans:
            continue
        if isinstance(use, ColumnUse) and (new_key(use, catalog) or use.array):
            continue
        values = [v for c in captured if (v := c.get(n)) is not None]
        if not values:
            continue
        if isinstance(use, str):
            type_name = "bigint"
        else:
            type_name = catalog.columns(use.table)[use.column].type
        pool = pool_from_values(values, type_name, captured_from)
        draws[n], notes[n] = FromPool(pool, type_name), f"from {pool.origin}"


def _whole(text: str) -> bool:
    return text.lstrip("-").isdigit()


def _spread(values: tuple[tuple[str, float], ...], count: int) -> tuple[tuple[str, float], ...]:
    """`count` of `values`, evenly spaced through them, equally weighted."""
    step = len(values) / count
    return tuple((values[int(i * step)][0], 1.0) for i in range(count))


def _limit(use: str, candidate: Candidate) -> tuple[Draw, str]:
    if use == "offset":
        return Fixed(0), "OFFSET 0 (assumed: no value is kept)"
    rows = candidate.statement.rows_per_call
    if not candidate.shape.aggregates and rows >= 1:
        return Fixed(max(1, round(rows))), f"LIMIT {round(rows)}: the source's rows per call"
    return Fixed(10), "LIMIT 10 (assumed: no value is kept)"


def _key(use: ColumnUse, catalog: Catalog, keys: dict[str, Key]) -> tuple[NewKey, str]:
    key = catalog.key(use.table)
    assert key is not None
    column = catalog.tables[key][use.column]
    if column.type == "uuid":
        return NewKey(None), f"a new {use.table.column_shown(use.column)}: gen_random_uuid()"
    # PostgreSQL keeps 63 bytes of a name (NAMEDATALEN), not 63 characters
    name = f"{key[1]}_{use.column}".encode()[:63].decode(errors="ignore")
    sequence = f"{KEYS_SCHEMA}.{name}"
    start = int(column.largest) + 1 if column.largest is not None else 1
    keys.setdefault(sequence, Key(sequence, start))
    return NewKey(sequence), (
        f"a new {use.table.column_shown(use.column)}, unique: from {sequence}, which starts above "
        f"the data's largest ({start - 1}): no two inserts collide"
    )


def written_wanted(selection: Selection, catalog: Catalog) -> set[tuple[str, str, str]]:
    """(schema, table, column) of each column an UPDATE or a DELETE finds the rows it
    changes by: the keys its clients wrote during a watch tell which rows they are."""
    out: set[tuple[str, str, str]] = set()
    for candidate in selection.candidates:
        shape = candidate.shape
        target = catalog.key(shape.target) if shape.target is not None else None
        if target is None:
            continue
        columns = {s.column for s in shape.spans if s.table == shape.target}
        for use in shape.params.values():
            if isinstance(use, ColumnUse) and use.table == shape.target and not use.written:
                columns.add(use.column)
        out.update((*target, c) for c in columns if c in catalog.tables[target])
    return out


def needed_columns(selection: Selection, catalog: Catalog) -> set[tuple[str, str, str]]:
    """(schema, table, column) of every parameter the candidates draw from the data."""
    out = set()
    for candidate in selection.candidates:
        for use in candidate.shape.params.values():
            if isinstance(use, ColumnUse) and not new_key(use, catalog):
                key = catalog.key(use.table)
                assert key is not None
                out.add((*key, use.column))
    return out
