"""`missing-index`: the index advisor's run (I/O): the statements and their generic
plans read from the live server (read-only), candidates from the plans' scans (a
partition's on its partitioned table), each checked on a throwaway copy with a
real index (what cannot be copied left out, and said), and the set chosen for the
whole workload with its writes (indexes/selection.py), the check's estimate said
before it starts and its progress while it runs; what the copy reads from the live
server said before it starts, the copy sampled where it is big or would not fit
(copy_check.py), the rule not checked where not even a sample fits; and the rule
within `pgopt advise`: its statements (a `--queries` file, checked before anything is read, or
pg_stat_statements), its findings and `indexes` section in advice.json, the chosen
indexes as indexes.sql."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pglast.parser import ParseError

from ..ab.data_size import read_tables
from ..ab.reading import SourceRead
from ..ab.relations import CopyList
from ..binaries import PgBinaries, find_binaries
from ..consoles import err
from ..errors import UsageError
from ..markup import comment
from ..redact import redact_dsn
from ..report.fmt import format_bytes
from ..servers import read_only
from ..servers.embedded import default_workdir_base
from ..servers.sessions import closed_on_error
from ..sqltree import relations_named, split_qualified
from ..store import write_atomic
from ..words import format_duration, plural
from .candidates import Candidate, candidates_for
from .check_progress import CheckProgress
from .check_work import plan_work
from .copy_check import NoRoom, check_on_copy, copy_share
from .live import read_workload, relations
from .outcome import RULE, IndexAdvice, findings, section, sql_script
from .scans import Scan, scans_of
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
    started = time.monotonic()
    with read_only.connect(dsn, "advise") as conn, closed_on_error(conn):
        reading = read_workload(conn, queries, cover)
    advice = IndexAdvice(
        reading.statements,
        "pg_stat_statements" if queries is None else "--queries",
        cover=cover if queries is None else None,
        refused=dict(reading.refused),
        tables=reading.tables,
        left_out=dict(reading.copy.left_out),
    )
    say(
        f"missing-index: {plural(len(reading.plans), 'statement')} planned"
        + (f", {len(reading.refused)} not" if reading.refused else "")
    )
    by_identity: dict[tuple[Any, ...], Candidate] = {}
    scans: dict[str, list[Scan]] = {}
    # which statements each one serves is the copy's planner's to say (copy_check.py)
    types = {n: {c: s.type for c, s in t.columns.items()} for n, t in reading.tables.items()}
    types |= {part: types[root] for part, root in reading.roots.items() if root in types}
    for sid, plan in reading.plans.items():
        roots = (on_root(s, reading.roots) for s in scans_of(plan, types))
        scans[sid] = [s for s in roots if s.qualified in reading.tables]
        for scan in scans[sid]:
            # pg_stat_statements keeps only the values that are the same in every call
            fresh, covered = candidates_for(
                scan, reading.tables[scan.qualified], reading.trigram,
                constant_literals=queries is None,
            )  # fmt: skip
            for c in fresh:
                by_identity.setdefault(c.identity, c)
            advice.covered.extend(
                cov for cov in covered if cov.candidate not in [x.candidate for x in advice.covered]
            )
    advice.candidates = list(by_identity.values())
    if not advice.candidates:
        advice.planner = "no candidate: nothing was copied"
        return advice
    if not reading.copy.tables:
        advice.planner = "nothing could be copied: " + "; ".join(
            f"{name}: {why}" for name, why in advice.left_out.items()
        )
        return advice
    tables = sorted({reading.roots.get(t, t) for p in reading.plans.values() for t in relations(p)})
    sizes = {t: reading.tables[t].pages * 8192 for t in tables if t in reading.tables}
    work = plan_work(advice.candidates, scans, sizes)
    for name, why in advice.left_out.items():
        say(f"missing-index: {name} left out of the copy: {why}")
    share = copy_share(read_tables(dsn), reading.copy.tables, default_workdir_base())
    what = plural(len(reading.copy.tables), "relation")
    how = "logical" if share.sample is None else "sampled"
    read = SourceRead(how, share.read_bytes, redact_dsn(dsn), what=what, sample=share.sample)
    say(f"missing-index: will read {read.describe()}")
    if share.sample is not None:
        say(
            f"missing-index: the plans are checked on a sample: {share.sample:g}% of the rows "
            f"of the tables of 1 MiB or more (whole, the copy would take about "
            f"{format_bytes(share.whole_bytes)} here)"
        )
    say(
        f"missing-index: checking {plural(len(advice.candidates), 'candidate')} "
        f"({plural(work.replan_count, 're-plan')}) on a copy of {plural(len(tables), 'table')} "
        f"(about {format_bytes(sum(sizes.values()))}) from {redact_dsn(dsn)}: "
        f"about {format_duration(work.estimate_s)} at most"
    )
    with CheckProgress(err, len(advice.candidates), work.estimate_s) as progress:
        check = check_on_copy(
            binaries, dsn, list(reading.copy.tables), list(reading.statements), work.replans,
            progress, share.sample,
        )  # fmt: skip
    advice.left_out.update(check.left_out)
    advice.base_plans, advice.plans_with = check.base_plans, check.plans_with
    advice.failed, advice.skipped, advice.copy_s = check.failed, check.skipped, check.copy_s
    for sid, why in check.refused.items():
        advice.refused.setdefault(sid, _left_out(advice.statement(sid), reading.copy) or why)
    advice.planner = (
        f"checked by PostgreSQL {check.version}'s planner on a copy of "
        f"{plural(len(tables), 'table')} with real indexes"
    )
    if share.sample is not None:
        advice.sample = share.sample
        advice.planner += (
            f", on a sample of {share.sample:g}% of the rows of the tables of 1 MiB or more"
        )
    planned = [s for s in reading.statements if s.id in check.base_plans]
    base_costs = {sid: float(p.get("Total Cost", 0.0)) for sid, p in check.base_plans.items()}
    weighed = [
        weigh(c, planned, base_costs, reading.writes_to, reading.tables) for c in check.checked
    ]
    advice.choice = choose(weighed, sum(s.total_ms for s in reading.statements))
    say(f"missing-index: checked in {format_duration(time.monotonic() - started)}")
    return advice


def _left_out(statement: Statement, copy: CopyList) -> str | None:
    """Why `statement` could not be planned on the copy when it names a relation the
    copy left out."""
    try:
        names = relations_named(statement.query)
    except ParseError:
        return None
    for name in names:
        why = copy.why_not(name)
        if why is not None:
            return f"reads {copy.named.get(name, name)}, left out of the copy: {why}"
    return None


def on_root(scan: Scan, roots: dict[str, str]) -> Scan:
    """A partition's scan as one of its partitioned table, where an index is made for
    every partition; any other scan as it is."""
    root = roots.get(scan.qualified)
    if root is None:
        return scan
    schema, table = split_qualified(root)
    return replace(scan, schema=schema, table=table)


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
        _not_checked(doc, folder, reason)
        return None
    binaries = find_binaries(None, need=SERVER_PROGRAMS)
    try:
        advice = advise_indexes(
            dsn, queries, cover, binaries,
            lambda m: err.print(f"[advise] {m}", markup=False, soft_wrap=True),
        )  # fmt: skip
    except NoRoom as e:
        err.print(f"[advise] {RULE}: not checked: {e}", markup=False, soft_wrap=True)
        _not_checked(doc, folder, str(e))
        return None
    doc["findings"] = sorted(
        [*doc["findings"], *findings(advice)], key=lambda f: SEVERITY_ORDER.index(f["severity"])
    )
    doc["indexes"] = section(advice)
    doc["rules_checked"].append(RULE)
    write_atomic(folder / "indexes.sql", sql_script(advice))
    return advice


def _not_checked(doc: dict[str, Any], folder: Path, reason: str) -> None:
    """The rule in advice.json's `not_checked`, with why, and an indexes.sql that says so."""
    doc["not_checked"].append({"rule": RULE, "reason": reason})
    write_atomic(
        folder / "indexes.sql", comment(f"pgopt advise: {RULE} not checked: {reason}") + "\n"
    )
