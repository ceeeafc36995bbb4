"""Which of the source's statements a replay takes (pure): those that make up `cover`
(90%) of its execution time, heaviest first, and every statement that writes,
whatever its share: a change to a table (an index, a fillfactor, a WAL setting) is
measured only where its writes are replayed. A statement that cannot be replayed
safely (replayable.Shape.refusal) is skipped with its reason, and a skipped write
is said apart; one whose only fault is a parameter bound to no column is taken
when a log capture holds its values (`captured`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..source.catalog import Catalog, SourceStatement
from ..statement_kind import kind_of
from .param_binding import ColumnUse, Operand
from .replayable import Shape, shape_of
from .values.draws import INTEGER_TYPES

COVER = 0.90
MAX_SCRIPTS = 100  # pgbench takes at most 128 scripts
NUMBER_TYPES = INTEGER_TYPES | {"numeric", "real", "double precision"}


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
    """Whether the statement writes (statement_kind.py: PostgreSQL's parser reads it)."""
    return kind_of(query).writes is not None


def select(
    statements: list[SourceStatement],
    catalog: Catalog,
    cover: float = COVER,
    captured: frozenset[str] = frozenset(),
    whole: frozenset[str] = frozenset(),
) -> Selection:
    """The statements that make up `cover` of the execution time and every write,
    replayable or not; `captured`: the queryids whose calls' values a log capture
    holds, so that a parameter no column holds is sent as captured; `whole`: those a
    log capture ran in its transactions, taken whatever `cover` says, so that each
    transaction is replayed with all its statements (without its cheap point reads,
    sysbench's 18 statements came out 8, shorter than the source's)."""
    ordered = sorted(statements, key=lambda s: s.total_ms, reverse=True)
    total = sum(s.total_ms for s in ordered) or 1.0
    candidates: list[Candidate] = []
    skipped: list[Skipped] = []
    share = 0.0
    for statement in ordered:
        own = statement.total_ms / total
        covered = share < cover or _writes(statement.query) or statement.queryid in whole
        if not covered or len(candidates) >= MAX_SCRIPTS:
            continue
        share += own
        shape = shape_of(statement.query, catalog.column_names)
        if shape.unbound and statement.queryid in captured:
            shape = replace(shape, refusal=None)
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
            return f"table {table.shown} is not in the source (temporary, or a view's)"
    for use in shape.params.values():
        if isinstance(use, str):
            continue
        column = catalog.columns(use.table).get(use.column)
        if column is None:
            return f"column {use.table.column_shown(use.column)} is not in the source"
        if isinstance(use, Operand) and column.type.split("(")[0] not in NUMBER_TYPES:
            return f"a value combined with {use.table.column_shown(use.column)} ({column.type})"
        keyable = column.type in INTEGER_TYPES or column.type == "uuid"
        if isinstance(use, ColumnUse) and use.written and column.unique and not keyable:
            return (
                f"writes {use.table.column_shown(use.column)}, which is unique and neither an "
                "integer nor a uuid: no new value can be made that cannot collide"
            )
    return None
