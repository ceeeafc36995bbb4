"""`missing-index`: the index advisor's run (I/O): the statements and their generic
plans read from the live server (read-only), candidates from the plans' scans,
each checked on a throwaway copy with a real index, and the set chosen for the
whole workload with its writes (indexes/selection.py); and the rule within `pgopt
advise`: its statements (a `--queries` file, checked before anything is read, or
pg_stat_statements), its findings and `indexes` section in advice.json, the chosen
indexes as indexes.sql."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..binaries import PgBinaries, find_binaries
from ..consoles import err
from ..errors import UsageError
from ..redact import redact_dsn
from ..report.fmt import format_bytes
from ..servers import read_only
from ..store import write_atomic
from ..words import plural
from .candidates import Candidate, candidates_for
from .copy_check import check_on_copy
from .live import read_workload, relations
from .outcome import RULE, IndexAdvice, findings, section, sql_script
from .scans import scans_of
from .selection import choose, weigh
from .workload import Statement, from_file


def advise_indexes(
    dsn: str,
    queries: list[Statement] | None,
    cover: float,
    binaries: PgBinaries,
    say: Callable[[str], None],
) -> IndexAdvice:
    """The index advice for the server at `dsn` (read in advise's read-only session;
    copied with pg_dump): from `queries`, or pg_stat_statements."""
    with read_only.connect(dsn, "advise") as conn:
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
    types = {n: {c: s.type for c, s in t.columns.items()} for n, t in reading.tables.items()}
    for plan in reading.plans.values():
        for scan in scans_of(plan, types):
            table = reading.tables.get(scan.qualified)
            if table is None:
                continue
            # pg_stat_statements keeps only the values that are the same in every call
            fresh, covered = candidates_for(
                scan, table, reading.trigram, constant_literals=queries is None
            )
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


SERVER_PROGRAMS = ("initdb", "postgres", "psql", "pg_dump", "pg_restore")
SEVERITY_ORDER = ("critical", "warning", "info")


def read_queries(path: Path | None) -> list[Statement] | None:
    """The statements of `--queries`, or None without one; one clear error for a
    file that is missing, unreadable or holds no statement."""
    if path is None:
        return None
    try:
        text = path.read_text()
    except OSError as e:
        raise UsageError(f"--queries {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--queries {path}: not a text file") from None
    statements = from_file(text)
    if not statements:
        raise UsageError(f"--queries {path}: no statement in it")
    return statements


def add_index_advice(
    doc: dict[str, Any],
    dsn: str,
    queries: list[Statement] | None,
    cover: float,
    folder: Path,
) -> IndexAdvice | None:
    """Run the advisor and put what it found into `doc`; None when it could not run
    (said in `not_checked`)."""
    if queries is None and not doc["evidence"]["pg_stat_statements"]:
        reason = (
            "pg_stat_statements is not installed in this database, and no --queries file "
            "names the statements: nothing to plan"
        )
        doc["not_checked"].append({"rule": RULE, "reason": reason})
        write_atomic(folder / "indexes.sql", f"-- pgopt advise: {RULE} not checked: {reason}\n")
        return None
    binaries = find_binaries(None, need=SERVER_PROGRAMS)
    advice = advise_indexes(
        dsn, queries, cover, binaries, lambda m: err.print(f"[advise] {m}", markup=False)
    )
    doc["findings"] = sorted(
        [*doc["findings"], *findings(advice)], key=lambda f: SEVERITY_ORDER.index(f["severity"])
    )
    doc["indexes"] = section(advice)
    doc["rules_checked"].append(RULE)
    write_atomic(folder / "indexes.sql", sql_script(advice))
    return advice
