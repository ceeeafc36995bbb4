"""Candidates checked by the planner on a throwaway copy, with real indexes: the
tables the plans read, copied from the live server with pg_dump (read-only, one
snapshot) into a server pgopt starts, vacuumed and analyzed; each statement's
generic plan as is; then each candidate built for real, once (its size and build
time measured), the statements that could use it planned again (check_work.py),
and the index dropped. On a partitioned table the index is made on every
partition, each under a name of its own: a plan that uses any of them uses the
candidate. A stop request is looked at between candidates, and a session
interrupted mid-query is closed, never reused (servers/sessions.py).

A real index is what the planner will see after CREATE INDEX, not HypoPG's
estimate of one, which is pessimistic by design and cannot be GIN.

Before anything is copied, `copy_share` holds the tables' sizes on the source
against the free space of the work folder: the copy is whole up to WHOLE_BYTES of
rows; above that, or where the whole would not fit, the big tables (1 MiB or more)
are sampled (ab/sample.py, the largest share of SAMPLES_TRIED that is small enough
and fits), and the plans are checked on the sample, which is said; where not even
a 1% sample fits, the rule is not checked, and why. pg_dump reads the source in one
job (ab/source.py), never a job a core.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from .. import stopping
from ..ab.data_size import SAMPLES_TRIED, TableSize, copy_size, matches
from ..ab.source import dump_source
from ..binaries import CLIENT_PROGRAMS, PgBinaries
from ..plans.generic import PlanError, generic_plan
from ..plans.shape import Plan, indexes_used, total_cost
from ..psql import Psql
from ..report.fmt import format_bytes
from ..servers.embedded import EmbeddedTarget, default_workdir_base
from ..servers.sessions import closed_on_error
from ..sqltree import quote_ident, split_qualified
from .candidates import Candidate
from .check_progress import CheckProgress
from .check_work import served_by_plain
from .selection import Checked
from .workload import Statement

# the rows a check copies whole, at most: above, the big tables are sampled (a plan's
# shape holds on a sample of a gigabyte; the restore and each candidate's build stay
# seconds, not minutes: engine/estimate.py's rates)
WHOLE_BYTES = 1 << 30
SERVER_BYTES = 64 << 20  # the copy's server before the copy: initdb, its first WAL
WAL_BYTES = 1 << 30  # the restore's WAL: up to max_wal_size before checkpoints recycle it


class NoRoom(Exception):
    """The copy would not fit in the work folder, even sampled: why."""


@dataclass(frozen=True)
class CopyShare:
    """What the check copies: `sample` percent of the big tables' rows (None: all),
    `read_bytes` read from the source, `local_bytes` at most on disk here."""

    sample: float | None
    read_bytes: int
    local_bytes: int
    whole_bytes: int  # on disk here, copied whole


def copy_share(tables: Sequence[TableSize], names: Sequence[str], folder: Path) -> CopyShare:
    """The copy of the tables `names` (the copy's, schema.name) that fits in `folder`'s
    free space: whole up to WHOLE_BYTES of rows, else a sample; NoRoom when not even
    the smallest sample fits."""
    free = shutil.disk_usage(folder).free
    chosen = [t for t in tables if any(matches(n, t) for n in names)]
    read = copy_size(chosen, (), None).dump_bytes  # a sample reads every page too
    whole = _local_bytes(chosen, None)
    for sample in (None, *SAMPLES_TRIED):
        small = copy_size(chosen, (), sample).dump_bytes <= WHOLE_BYTES
        local = _local_bytes(chosen, sample)
        if (small or sample == SAMPLES_TRIED[-1]) and local <= free:
            return CopyShare(sample, read, local, whole)
    raise NoRoom(
        f"a copy of {len(chosen)} table(s) needs about {format_bytes(whole)} in {folder} "
        f"(a {SAMPLES_TRIED[-1]:g}% sample of the big ones "
        f"{format_bytes(_local_bytes(chosen, SAMPLES_TRIED[-1]))}) and {format_bytes(free)} "
        "are free"
    )


def _local_bytes(tables: Sequence[TableSize], sample: float | None) -> int:
    """On disk here at most: the server, the dump (the heaps), the restored tables
    with their indexes, the restore's WAL, and the largest candidate while it is
    built (about its table's heap at most)."""
    size = copy_size(tables, (), sample)
    largest = max((copy_size([t], (), sample).dump_bytes for t in tables), default=0)
    restored = size.database_bytes
    return SERVER_BYTES + size.dump_bytes + restored + min(restored, WAL_BYTES) + largest


@dataclass
class CopyCheck:
    version: str  # the planner's PostgreSQL
    copy_s: float
    base_plans: dict[str, Plan] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # statement id -> why not here
    checked: list[Checked] = field(default_factory=list)
    plans_with: dict[str, dict[str, Plan]] = field(default_factory=dict)  # name -> id -> plan
    failed: dict[str, str] = field(default_factory=dict)  # candidate name -> the server's reason
    left_out: dict[str, str] = field(default_factory=dict)  # relation -> why it is not copied
    skipped: dict[Candidate, str] = field(default_factory=dict)  # -> the plain index serving


def check_on_copy(
    binaries: PgBinaries,
    dsn: str,
    tables: list[str],
    statements: list[Statement],
    replans: dict[Candidate, tuple[str, ...]],
    progress: CheckProgress,
    sample: float | None = None,
    workdir: Path | None = None,
) -> CopyCheck:
    """Copy `tables` (their big ones' rows sampled to `sample` percent), plan
    `statements` there, and each candidate built in turn, the statements `replans`
    names for it planned again."""
    binaries.require(*CLIENT_PROGRAMS)
    base = workdir or default_workdir_base()
    with tempfile.TemporaryDirectory(prefix="pgopt-index-", dir=base) as folder:
        started = time.monotonic()
        copied = dump_source(binaries, dsn, tuple(tables), Path(folder), sample)
        with EmbeddedTarget(binaries, workdir=base) as server:
            psql = Psql(binaries, server.client_env())
            for path in copied.setup:
                if path.is_dir():
                    psql.restore(path)
                else:
                    psql.run_file(path, {}, what="the copy's schema")
            with server.connect() as conn, closed_on_error(conn):
                conn.execute("vacuum analyze")
                check = CopyCheck(server.binaries.version, time.monotonic() - started)
                check.left_out = dict(copied.relations_left_out)
                progress.phase(f"copied in {check.copy_s:.0f} s; planning the statements")
                _plan_all(conn, statements, check)
                if any(c.method == "gin" for c in replans):
                    conn.execute("create extension if not exists pg_trgm")
                progress.phase("building each candidate")
                by_id = {s.id: s for s in statements}
                base_costs = {sid: total_cost(p) for sid, p in check.base_plans.items()}
                for i, (candidate, sids) in enumerate(replans.items(), start=1):
                    stopping.check()  # a stop whose exception a finalizer swallowed
                    plain = served_by_plain(candidate, sids, check.checked, base_costs)
                    if plain is None:
                        _check_one(conn, candidate, [by_id[sid] for sid in sids], check)
                    else:
                        check.skipped[candidate] = plain
                    progress.checked(i)
    return check


def _plan_all(conn: psycopg.Connection[Any], statements: list[Statement], check: CopyCheck) -> None:
    for s in statements:
        try:
            check.base_plans[s.id] = generic_plan(conn, s.query)
        except PlanError as e:
            check.refused[s.id] = f"on the copy: {e}"


def _check_one(
    conn: psycopg.Connection[Any],
    candidate: Candidate,
    statements: list[Statement],
    check: CopyCheck,
) -> None:
    """Build `candidate`, plan `statements` again with it, drop it (on the way out by
    an exception the copy is thrown away whole: nothing more is sent)."""
    name = candidate.name()
    schema = quote_ident(split_qualified(candidate.table)[0])
    index = f"{schema}.{quote_ident(name)}"
    started = time.monotonic()
    try:
        conn.execute(candidate.ddl(concurrently=False))
    except psycopg.Error as e:
        check.failed[name] = str(e).splitlines()[0]
        return
    build_s = time.monotonic() - started
    if any(not k.is_column for k in candidate.keys):
        conn.execute(f"analyze {candidate.table}")  # the expression's statistics
    size, built = _built(conn, index)
    costs: dict[str, float] = {}
    plans: dict[str, Plan] = {}
    for s in statements:
        if s.id not in check.base_plans:
            continue
        try:
            plan = generic_plan(conn, s.query)
        except PlanError:
            continue
        if built & set(indexes_used(plan)):
            costs[s.id] = total_cost(plan)
            plans[s.id] = plan
    check.checked.append(Checked(candidate, name, size, build_s, costs))
    check.plans_with[name] = plans
    conn.execute(f"drop index {index}")


def _built(conn: psycopg.Connection[Any], index: str) -> tuple[int, set[str]]:
    """An index's size on disk and its names as plans print them: on a partitioned
    table, those of every partition's index with it."""
    rows = conn.execute(
        "select c.relname, pg_relation_size(c.oid) from pg_class c where c.oid = %(i)s::regclass "
        "union select c.relname, pg_relation_size(c.oid) from pg_partition_tree(%(i)s::regclass) t "
        "join pg_class c on c.oid = t.relid",
        {"i": index},
    ).fetchall()
    return sum(int(size) for _name, size in rows), {str(n) for n, _size in rows}
