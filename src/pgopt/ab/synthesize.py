"""A pgbench workload synthesized from the source's pg_stat_statements (pure).

The statements that make up `cover` (90%) of the source's execution time are
taken, heaviest first, and every statement that writes, whatever its share: a
change to a table (an index, a fillfactor, a WAL setting) is measured only where
its writes are replayed. A statement that cannot be replayed safely
(sql_params.Shape.refusal) is skipped with its reason, and a skipped write is
said apart. Each parameter is drawn per transaction by the rule of draws.py.

Each statement becomes one block: its draws and its text, tagged with a comment
after its first word (`SELECT /* pgopt q01 */ ...`) by which the replay's
pg_stat_statements row is found again for the fidelity check. Blocks become
scripts as the source ran them: one statement a transaction where its commits
say so (autocommit), else transactions
of the source's statements-per-commit slots, each slot one statement drawn by its
calls, between BEGIN and COMMIT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .catalog import Catalog, SourceStatement, SourceWorkload
from .draws import INTEGER_TYPES, Pool
from .parameters import Key, draws_of, new_key
from .scripts import Block, Script, autocommit_scripts, block, transaction_script
from .sql_params import ColumnUse, Operand, Shape, shape_of

COVER = 0.90
MAX_SCRIPTS = 100  # pgbench takes at most 128 scripts
NUMBER_TYPES = INTEGER_TYPES | {"numeric", "real", "double precision"}
TRANSACTION_MIN = 1.5  # statements per commit from which transactions are grouped
NOT_SAMPLED = SourceWorkload(note="not sampled: each statement its own transaction")
WRITES = re.compile(r"\s*(with\b.*\b)?(insert|update|delete|merge)\b", re.I | re.S)


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

    @property
    def writes(self) -> bool:
        return _writes(self.statement.query)


@dataclass(frozen=True)
class Selection:
    candidates: tuple[Candidate, ...]
    skipped: tuple[Skipped, ...]
    chosen_share: float  # of the source's time, in the statements looked at
    capped: bool  # MAX_SCRIPTS stopped the selection before `cover`
    cover: float


def _writes(query: str) -> bool:
    return WRITES.match(query) is not None


def select(statements: list[SourceStatement], catalog: Catalog, cover: float = COVER) -> Selection:
    """The statements that make up `cover` of the execution time and every write,
    replayable or not."""
    ordered = sorted(statements, key=lambda s: s.total_ms, reverse=True)
    total = sum(s.total_ms for s in ordered) or 1.0
    candidates: list[Candidate] = []
    skipped: list[Skipped] = []
    share = 0.0
    for statement in ordered:
        own = statement.total_ms / total
        if (share >= cover and not _writes(statement.query)) or len(candidates) >= MAX_SCRIPTS:
            continue
        share += own
        shape = shape_of(statement.query, catalog.column_names)
        reason = shape.refusal or _refusal(shape, catalog)
        if reason:
            skipped.append(Skipped(statement, own, reason))
        else:
            candidates.append(Candidate(statement, shape, own))
    capped = len(candidates) >= MAX_SCRIPTS and share < cover
    return Selection(tuple(candidates), tuple(skipped), share, capped, cover)


def _refusal(shape: Shape, catalog: Catalog) -> str | None:
    for table in shape.tables:
        if catalog.key(table) is None:
            return f"table {table.name} is not in the source (temporary, or a view's)"
    for use in shape.params.values():
        if isinstance(use, str):
            continue
        column = catalog.columns(use.table).get(use.column)
        if column is None:
            return f"column {use.table.name}.{use.column} is not in the source"
        if isinstance(use, Operand) and column.type.split("(")[0] not in NUMBER_TYPES:
            return f"a value combined with {use.table.name}.{use.column} ({column.type})"
        keyable = column.type in INTEGER_TYPES or column.type == "uuid"
        if isinstance(use, ColumnUse) and use.written and column.unique and not keyable:
            return (
                f"writes {use.table.name}.{use.column}, which is unique and neither an "
                "integer nor a uuid: no new value can be made that cannot collide"
            )
    return None


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


@dataclass(frozen=True)
class Synthesis:
    blocks: tuple[Block, ...]
    scripts: tuple[Script, ...]
    skipped: tuple[Skipped, ...]
    chosen_share: float
    capped: bool
    cover: float
    keys: tuple[Key, ...] = ()
    workload: SourceWorkload = NOT_SAMPLED
    slots: int = 1  # statements a replayed transaction runs

    @property
    def replayed_share(self) -> float:
        return sum(b.time_share for b in self.blocks)

    @property
    def dropped_writes(self) -> tuple[Skipped, ...]:
        return tuple(k for k in self.skipped if k.writes)


def synthesize(
    selection: Selection,
    catalog: Catalog,
    pools: dict[tuple[str, str, str], Pool],
    workload: SourceWorkload = NOT_SAMPLED,
    everything: tuple[SourceStatement, ...] = (),
) -> Synthesis:
    """The candidates whose parameters all have values, as blocks, then scripts.
    `everything`: the source's statements (ranges are sized from their neighbours')."""
    blocks: list[Block] = []
    skipped = list(selection.skipped)
    keys: dict[str, Key] = {}
    for candidate in selection.candidates:
        empty = _empty_column(candidate.shape, catalog, pools)
        if empty:
            skipped.append(
                Skipped(candidate.statement, candidate.time_share, f"no values of {empty}")
            )
            continue
        name = f"q{len(blocks) + 1:02d}"
        draws, notes = draws_of(candidate, catalog, pools, keys, everything)
        blocks.append(block(name, candidate, draws, notes))
    skipped.sort(key=lambda s: s.time_share, reverse=True)
    slots = _slots(workload)
    scripts = transaction_script(blocks, slots) if slots > 1 else autocommit_scripts(blocks)
    return Synthesis(
        tuple(blocks),
        scripts,
        tuple(skipped),
        selection.chosen_share,
        selection.capped,
        selection.cover,
        tuple(keys.values()),
        workload,
        slots,
    )


def _slots(workload: SourceWorkload) -> int:
    per = workload.statements_per_commit
    return round(per) if per is not None and per >= TRANSACTION_MIN else 1


def _empty_column(
    shape: Shape, catalog: Catalog, pools: dict[tuple[str, str, str], Pool]
) -> str | None:
    for use in shape.params.values():
        if isinstance(use, ColumnUse) and not new_key(use, catalog):
            key = catalog.key(use.table)
            assert key is not None
            pool = pools.get((*key, use.column))
            if pool is None or pool.empty:
                return f"{use.table.name}.{use.column} (an empty table, or no statistics)"
    return None
