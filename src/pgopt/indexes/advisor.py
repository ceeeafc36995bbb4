"""`missing-index`: the index advisor's run (I/O): the statements and their generic
plans read from the live server (read-only), candidates from the plans' scans,
each checked on a throwaway copy with a real index, and the set chosen for the
whole workload with its writes (indexes/selection.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg

from ..binaries import PgBinaries
from ..redact import redact_dsn
from ..report.fmt import format_bytes
from ..words import plural
from .candidates import Candidate, candidates_for
from .copy_check import check_on_copy
from .live import read_workload, relations
from .outcome import IndexAdvice
from .scans import scans_of
from .selection import choose, weigh
from .workload import Statement


def advise_indexes(
    params: dict[str, Any],
    dsn: str,
    queries: list[Statement] | None,
    cover: float,
    binaries: PgBinaries,
    say: Callable[[str], None],
) -> IndexAdvice:
    """The index advice for the server at `params` (advise's read-only session
    parameters; `dsn` for pg_dump): from `queries`, or pg_stat_statements."""
    with psycopg.connect(**params, autocommit=True, connect_timeout=10) as conn:
        reading = read_workload(conn, queries, cover)
    advice = IndexAdvice(
        reading.statements,
        "pg_stat_statements" if queries is None else "--queries",
        cover=cover if queries is None else None,
        refused=dict(reading.refused),
        tables=reading.tables,
    )
    say(
        f"missing-index: {plural(len(reading.plans), 'statement')} planned"
        + (f", {len(reading.refused)} not" if reading.refused else "")
    )
    by_identity: dict[tuple[Any, ...], Candidate] = {}
    # which statements each one serves is the copy's planner's to say (copy_check.py)
    for plan in reading.plans.values():
        for scan in scans_of(plan):
            table = reading.tables.get(scan.qualified)
            if table is None:
                continue
            fresh, covered = candidates_for(scan, table, reading.trigram)
            for c in fresh:
                by_identity.setdefault(c.identity, c)
            advice.covered.extend(
                cov for cov in covered if cov.candidate not in [x.candidate for x in advice.covered]
            )
    advice.candidates = list(by_identity.values())
    if not advice.candidates:
        advice.planner = "no candidate: nothing was copied"
        return advice
    tables = sorted({t for p in reading.plans.values() for t in relations(p)})
    size = sum(reading.tables[t].pages for t in tables if t in reading.tables) * 8192
    say(
        f"missing-index: checking {plural(len(advice.candidates), 'candidate')} on a copy of "
        f"{plural(len(tables), 'table')} (about {format_bytes(size)}) from {redact_dsn(dsn)}"
    )
    check = check_on_copy(binaries, dsn, tables, list(reading.statements), advice.candidates, say)
    advice.base_plans, advice.plans_with = check.base_plans, check.plans_with
    advice.failed, advice.copy_s = check.failed, check.copy_s
    for sid, why in check.refused.items():
        advice.refused.setdefault(sid, why)
    advice.planner = (
        f"checked by PostgreSQL {check.version}'s planner on a copy of "
        f"{plural(len(tables), 'table')} with real indexes"
    )
    planned = [s for s in reading.statements if s.id in check.base_plans]
    base_costs = {sid: float(p.get("Total Cost", 0.0)) for sid, p in check.base_plans.items()}
    weighed = [
        weigh(c, planned, base_costs, reading.writes_to, reading.tables) for c in check.checked
    ]
    advice.choice = choose(weighed, sum(s.total_ms for s in reading.statements))
    return advice
