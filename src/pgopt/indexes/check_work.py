"""What the check on the copy has to do, and how long it should take (pure).

A candidate is built once, and only the statements that could use it are planned
again with it: those whose scans of its table constrain, sort or join on its
leading key's columns (a btree, or a trigram GIN, is searched by its first key; a
statement on the same table that never names that column keeps its plan). On a
hundred statements each filtering one of a hundred columns, that is one re-plan a
candidate instead of a hundred. A covering variant (the same keys with INCLUDE
columns) is checked after its plain index, and not built at all when the plain
one already takes (1 - TOLERANCE) off the plan cost of every statement the
variant could serve: it could save at most the rest, within the tolerance by
which selection.py prefers the smaller index anyway.

The estimate adds the copy (pg_dump and pg_restore at `pgopt ab --dry-run`'s
rates), each candidate's build (its table read once, sorted and written) and each
re-plan; the rates are this 2-core machine's (bench/README.md, advise_scale.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine.estimate import DUMP_BPS, RESTORE_BPS, START_S
from .candidates import Candidate
from .scans import Scan
from .selection import TOLERANCE, Checked

INDEX_BUILD_BPS = 350e6  # CREATE INDEX on a table of integer columns, its size read
BUILD_S = 0.02  # the catalog work of a build and its drop, however small the table
PLAN_S = 0.004  # one generic plan of a statement on the copy, EXPLAIN VERBOSE's JSON


@dataclass(frozen=True)
class Work:
    """The check's work: for each candidate, the statements planned again with it."""

    replans: dict[Candidate, tuple[str, ...]]
    estimate_s: float

    @property
    def replan_count(self) -> int:
        return sum(len(s) for s in self.replans.values())


def constrained(scans: dict[str, list[Scan]]) -> dict[str, dict[str, set[str]]]:
    """For each statement id, the columns its scans constrain, per table."""
    out: dict[str, dict[str, set[str]]] = {}
    for sid, found in scans.items():
        tables = out.setdefault(sid, {})
        for scan in found:
            columns = tables.setdefault(scan.qualified, set())
            for key in (*scan.equality, *scan.ranges, *scan.sort, *scan.like):
                columns.update(key.columns)
            columns.update(scan.constant_columns)
            for key, _ in scan.literals:  # `user_id = 1`: a key, or a partial index's
                columns.update(key.columns)
    return out


def could_use(candidate: Candidate, columns: dict[str, set[str]]) -> bool:
    """Whether a statement constraining `columns` (per table) could use `candidate`:
    a column of its leading key is one of them."""
    lead = candidate.keys[0].columns if candidate.keys else ()
    return bool(set(lead) & columns.get(candidate.table, set()))


def plan_work(
    candidates: list[Candidate],
    scans: dict[str, list[Scan]],
    table_bytes: dict[str, int],
) -> Work:
    """Which statements each candidate is planned again for, and the estimate of the
    whole check (the copy of `table_bytes`' tables included)."""
    reads = constrained(scans)
    ordered = sorted(candidates, key=lambda c: bool(c.include))  # plain ones first
    replans = {
        c: tuple(sid for sid, columns in reads.items() if could_use(c, columns)) for c in ordered
    }
    size = sum(table_bytes.values())
    seconds = START_S + size / DUMP_BPS + size / RESTORE_BPS + len(reads) * PLAN_S
    for c, sids in replans.items():
        seconds += BUILD_S + table_bytes.get(c.table, 0) / INDEX_BUILD_BPS + len(sids) * PLAN_S
    return Work(replans, seconds)


def served_by_plain(
    candidate: Candidate,
    sids: tuple[str, ...],
    checked: list[Checked],
    base_costs: dict[str, float],
) -> str | None:
    """The name of `candidate`'s plain index (its keys without INCLUDE), checked
    already, when that one takes (1 - TOLERANCE) off the plan cost of every
    statement of `sids` planned on the copy; None when the variant is to be built."""
    if not candidate.include:
        return None
    plain_identity = replace(candidate, include=()).identity
    plain = next((c for c in checked if c.candidate.identity == plain_identity), None)
    planned = [sid for sid in sids if sid in base_costs]
    if plain is None or not planned:
        return None
    for sid in planned:
        after = plain.costs.get(sid)
        if after is None or after > TOLERANCE * base_costs[sid]:
            return None
    return plain.name
