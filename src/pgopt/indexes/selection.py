"""Which candidates to add, for the whole workload (pure).

Each statement weighs its execution time (calls × time per call). A checked
candidate saves a statement the share of its plan cost the index takes off
(counted only from MIN_GAIN), and costs each write on its table a share of its
time: pganalyze's Index Write Overhead, the index entry's bytes over the row's,
for every INSERT and every UPDATE that is not HOT, and for an UPDATE that sets an
indexed column, the HOT update it loses (its other indexes written too). DELETEs
add nothing at once (vacuum removes the entries). The set is built greedily,
largest net saving first (the smallest index of those within TOLERANCE of it),
then trimmed twice by TOLERANCE. First per statement: an index is left out when
every statement it serves keeps within TOLERANCE of its best saving from the
indexes left (a composite or covering variant beside the one-column index that
serves its statements about as well). Then for the set (pganalyze_lint): the
fewest indexes whose saving is within TOLERANCE of the set's, except that an
index that serves a statement, taking at least 1 - TOLERANCE off its plan cost, is
never cut for being small: a hundred statements each served by an index of its
own get a hundred indexes, however small each one's share of the workload. Every
candidate left out says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .candidates import Candidate, ColumnStats, TableFacts
from .workload import Statement

MIN_GAIN = 0.10
MIN_GAIN_SOURCE = "Postgres MCP Pro: a candidate counts for a statement from 10% off its plan cost"
TOLERANCE = 0.10
TOLERANCE_SOURCE = (
    "pganalyze_lint: the fewest indexes within 10% of the best set's saving; pgopt: per "
    "statement too, and never an index that takes 90% or more off a statement's plan cost"
)
WRITE_SOURCE = (
    "pganalyze's Index Write Overhead: index entry bytes / row bytes per row written, "
    "and the HOT updates an indexed column loses"
)


@dataclass(frozen=True)
class Checked:
    """A candidate built on the copy: its real size and build time, and each
    statement's plan cost with it (only where the plan uses it)."""

    candidate: Candidate
    name: str
    bytes: int
    build_s: float
    costs: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Weighed:
    checked: Checked
    saved_ms: dict[str, float]  # statement id -> estimated ms saved
    cuts: dict[str, float]  # statement id -> the share of its plan cost taken off
    write_ms: float  # estimated ms added to the writes
    writes: tuple[str, ...]  # the write statements it slows


@dataclass(frozen=True)
class Choice:
    chosen: tuple[Weighed, ...]
    rejected: tuple[tuple[Weighed, str], ...]
    write_rejected: tuple[Weighed, ...]  # left out by the write estimate alone
    workload_ms: float
    saved_ms: float  # the chosen set's net estimated saving


def weigh(
    checked: Checked,
    statements: list[Statement],
    base_costs: dict[str, float],
    writes_to: dict[str, str],
    tables: dict[str, TableFacts],
) -> Weighed:
    saved: dict[str, float] = {}
    cuts: dict[str, float] = {}
    for s in statements:
        after, before = checked.costs.get(s.id), base_costs.get(s.id)
        if after is None or not before or after > (1 - MIN_GAIN) * before:
            continue
        cuts[s.id] = 1 - after / before
        saved[s.id] = s.total_ms * cuts[s.id]
    table = tables.get(checked.candidate.table)
    write_ms, slowed = 0.0, []
    if table is not None:
        for s in statements:
            if writes_to.get(s.id) != checked.candidate.table or s.writes in (None, "delete"):
                continue
            share = write_share(checked.candidate, table, s)
            if share > 0:
                write_ms += s.total_ms * share
                slowed.append(s.id)
    return Weighed(checked, saved, cuts, write_ms, tuple(slowed))


def write_overhead(candidate: Candidate, table: TableFacts) -> float:
    """Index entry bytes over row bytes (a GIN trigram index: a posting a character)."""
    widths = sum(table.columns.get(c, ColumnStats()).width for c in candidate.columns)
    entry = (widths + 2) * 6 if candidate.method == "gin" else widths + 12
    return entry / max(table.row_width, 1.0)


def write_share(candidate: Candidate, table: TableFacts, statement: Statement) -> float:
    """The share of `statement`'s time the index would add to it."""
    overhead = write_overhead(candidate, table)
    if statement.writes in ("insert", "merge"):
        return overhead
    hot = table.hot_updates / table.updates if table.updates else 0.0
    if set(statement.sets) & set(candidate.columns):
        others = sum(
            write_overhead(Candidate(table.name, i.keys, i.include), table) for i in table.indexes
        )
        return overhead + hot * others
    return overhead * (1 - hot)


def net_ms(chosen: list[Weighed]) -> float:
    """The estimated saving of a set: each statement's best saving, minus every
    index's write cost."""
    best = _best(chosen)
    return sum(best.values()) - sum(w.write_ms for w in chosen)


def _best(chosen: list[Weighed]) -> dict[str, float]:
    """Each statement's best saving among `chosen`."""
    best: dict[str, float] = {}
    for w in chosen:
        for sid, ms in w.saved_ms.items():
            best[sid] = max(best.get(sid, 0.0), ms)
    return best


def _gain(w: Weighed, best: dict[str, float]) -> float:
    """What adding `w` to a set whose best savings are `best` adds to its net saving."""
    return sum(max(ms - best.get(sid, 0.0), 0.0) for sid, ms in w.saved_ms.items()) - w.write_ms


def choose(weighed: list[Weighed], workload_ms: float) -> Choice:
    remaining = sorted(weighed, key=lambda w: (w.checked.bytes, w.checked.name))
    picked: list[Weighed] = []
    best: dict[str, float] = {}
    while remaining:
        gains = [(_gain(w, best), w) for w in remaining]
        top = max(g for g, _w in gains)
        if top <= 0:
            break
        # the smallest index whose gain is within the tolerance of the best one's
        pick = next(w for g, w in gains if g >= (1 - TOLERANCE) * top)
        picked.append(pick)
        remaining.remove(pick)
        for sid, ms in pick.saved_ms.items():
            best[sid] = max(best.get(sid, 0.0), ms)
    chosen = _trimmed(picked)
    rejected, write_rejected = [], []
    for w in weighed:
        if w in chosen:
            continue
        rejected.append((w, _why_not(w, chosen, picked)))
        if w.saved_ms and sum(w.saved_ms.values()) <= w.write_ms:
            write_rejected.append(w)
    return Choice(
        tuple(chosen), tuple(rejected), tuple(write_rejected), workload_ms, net_ms(chosen)
    )


def _trimmed(picked: list[Weighed]) -> list[Weighed]:
    """`picked` without the indexes whose every statement keeps within TOLERANCE of
    its best saving from the others kept, then cut to the fewest within TOLERANCE of
    the set's saving, those serving a statement kept; the last picked (the least
    gain) tried first."""
    reference = _best(picked)
    kept = list(picked)
    for w in reversed(picked):
        others = [o for o in kept if o is not w]
        if all(
            max((o.saved_ms.get(sid, 0.0) for o in others), default=0.0)
            >= (1 - TOLERANCE) * reference[sid]
            for sid in w.saved_ms
        ):
            kept = others
    full = net_ms(kept)
    for w in reversed(list(kept)):
        if max(w.cuts.values(), default=0.0) >= 1 - TOLERANCE:
            continue  # it serves a statement
        others = [o for o in kept if o is not w]
        if net_ms(others) >= (1 - TOLERANCE) * full:
            kept = others
    return kept


def _why_not(w: Weighed, chosen: list[Weighed], picked: list[Weighed]) -> str:
    if not w.checked.costs:
        return (
            "the planner uses it for no statement: a sequential scan or another index stays cheaper"
        )
    if not w.saved_ms:
        return f"takes less than {MIN_GAIN:.0%} off the plan cost of every statement that uses it"
    reads = sum(w.saved_ms.values())
    if reads <= w.write_ms:
        return (
            f"costs the writes more than it saves the reads: about {reads:,.0f} ms saved, "
            f"{w.write_ms:,.0f} ms added to {len(w.writes)} write statement(s) (estimated)"
        )
    better = [c.checked.name for c in chosen if set(w.saved_ms) & set(c.saved_ms)]
    if better:
        return f"its statements are served as well by {', '.join(better)}"
    if w in picked:
        return f"the set without it saves within {TOLERANCE:.0%} of the set with it"
    return "adds no saving to the chosen set"
