"""How the user's database reaches the throwaway server an A/B runs on, said which and
why: a physical copy where it can be (servers/physical_copy.py: pg_basebackup, as old
as the source: its dead rows, free space, row order, visibility map and statistics),
else a logical one (ab/source.py: pg_dump in one snapshot, restored, then vacuumed
and analyzed: younger than the source, its heap packed in key order, so reads may run
faster there than on the source). `--copy physical` refuses, in one line, where a
physical copy cannot be made; `--copy logical` never tries one. Which copy, its
size and what it reads from the source are decided before anything is copied
(`plan_copy`, for `--dry-run` too), and said in one line as the copy starts
(ab/reading.py); a physical copy's progress is shown while it runs.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..binaries import PgBinaries
from ..consoles import err
from ..errors import UsageError
from ..lab.spec import DataCopy
from ..markup import one_line
from ..redact import redact_dsn
from ..report.fmt import format_bytes
from ..running.options import RunOptions
from ..servers import physical_copy
from ..servers.physical_copy import SOURCE_DATABASE, PhysicalCopyTarget
from ..words import plural
from .copy_progress import CopyProgress
from .data_size import CopySize
from .reading import CopyPace, SourceRead, checkpoint_wait
from .source import dump_source, script_of_dump
from .spec import AbSpec

PHYSICAL = (
    "pg_basebackup of the source's cluster ({pace}, after a {checkpoint} checkpoint): a "
    "physical copy, as old as the source (its dead rows, free space, row order, "
    "visibility map and statistics)"
)
LOGICAL = (
    "restored with pg_restore: a logical copy, younger than the source (no dead rows, "
    "rows in key order, fresh statistics), on which reads may run faster"
)


@dataclass(frozen=True)
class Copied:
    """The A/B with its data's setup files, what copying took, and for a physical copy
    the server the lab runs on."""

    ab: AbSpec
    copy: DataCopy
    target: PhysicalCopyTarget | None = None


@dataclass(frozen=True)
class CopyPlan:
    """The copy decided and sized before anything is copied: physical or not, what it
    reads from the source (None for a dump file), and a physical copy's facts of the
    source (its database, its bootstrap superuser, its cluster's bytes)."""

    physical: bool
    read: SourceRead | None = None
    facts: tuple[str, str, int] | None = None


def why_not_physical(ab: AbSpec, run: RunOptions, binaries: PgBinaries) -> str | None:
    """Why this A/B's data cannot be a physical copy of its source, or None."""
    if ab.dump is not None or ab.source_dsn is None:
        return "the data is a dump file"
    if run.dsn:
        return "the A/B runs on your server (--dsn): only a throwaway server can be one"
    if run.sides is not None:
        return "across versions each side restores the data with its own programs"
    if ab.tables:
        return "--table copies some tables, a physical copy the whole cluster"
    if ab.sample is not None:
        return "--sample copies part of the rows"
    return physical_copy.obstacle(ab.source_dsn, binaries)


def plan_copy(
    ab: AbSpec,
    run: RunOptions,
    binaries: PgBinaries,
    folder: Path,
    pace: CopyPace,
    heap_bytes: int,
) -> CopyPlan:
    """The copy `ab.copy` asks for: physical where it can be (`auto`), else logical,
    the reason said; `--copy physical` that cannot be, or a physical copy that would
    not fit in `folder`, is an error. `heap_bytes`: what a logical copy reads."""
    why = None if ab.copy == "logical" else why_not_physical(ab, run, binaries)
    if ab.copy == "physical" and why is not None:
        raise UsageError(f"--copy physical: {why}")
    if ab.copy == "auto" and why is not None and ab.source_dsn is not None:
        err.print(f"pgopt: a logical copy: {why}", highlight=False)
    if ab.source_dsn is None:
        return CopyPlan(False)
    where = redact_dsn(ab.source_dsn)
    if ab.copy == "logical" or why is not None:
        what = "its database" if not ab.tables else "the tables --table names"
        how = "logical" if ab.sample is None else "sampled"
        return CopyPlan(False, SourceRead(how, heap_bytes, where, what=what, sample=ab.sample))
    facts = physical_copy.source_facts(ab.source_dsn)
    cluster_bytes = facts[2]
    free = shutil.disk_usage(folder).free
    if cluster_bytes > free:
        raise UsageError(
            f"a physical copy needs about {format_bytes(cluster_bytes)} in {folder} (the "
            f"source's whole cluster) and {format_bytes(free)} are free: --copy logical "
            "copies its database alone"
        )
    wait_s, setting = checkpoint_wait(*physical_copy.checkpoint_settings(ab.source_dsn))
    read = SourceRead("physical", cluster_bytes, where, pace, wait_s, setting)
    return CopyPlan(True, read, facts)


def copy_data(
    ab: AbSpec,
    run: RunOptions,
    binaries: PgBinaries,
    folder: Path,
    size: CopySize | None,
    plan: CopyPlan,
) -> Copied:
    """The user's data copied as `plan` says, what it reads said first."""
    if plan.read is not None:
        err.print(f"pgopt: will read {plan.read.describe()}", markup=False, soft_wrap=True)
    if plan.physical:
        return _physical(ab, run, binaries, folder, plan)
    ab, copy = _logical(ab, binaries, folder, size)
    return Copied(ab, copy)


def _physical(
    ab: AbSpec, run: RunOptions, binaries: PgBinaries, folder: Path, plan: CopyPlan
) -> Copied:
    assert ab.source_dsn is not None and plan.facts is not None and plan.read is not None
    database, superuser, cluster_bytes = plan.facts
    pace = plan.read.pace
    started = time.monotonic()
    backup = folder / "basebackup"
    with CopyProgress(err, plan.read) as progress:
        physical_copy.basebackup(
            binaries,
            ab.source_dsn,
            backup,
            checkpoint=pace.checkpoint,
            max_rate=pace.max_rate(),
            progress=progress,
        )
    seconds = time.monotonic() - started
    err.print(f"pgopt: copied in {seconds:.1f}s", highlight=False)
    target = PhysicalCopyTarget(
        binaries, backup, database=database, superuser=superuser, workdir=run.workdir,
        keep=run.keep, say=lambda m: err.print(f"[ab] {m}", markup=False, highlight=False),
    )  # fmt: skip
    how = PHYSICAL.format(pace=pace.described(), checkpoint=pace.checkpoint)
    copy = DataCopy(seconds, cluster_bytes, how, "physical", SOURCE_DATABASE)
    return Copied(ab, copy, target)


def _logical(
    ab: AbSpec, binaries: PgBinaries, folder: Path, size: CopySize | None
) -> tuple[AbSpec, DataCopy]:
    """The A/B with the copy of the user's database (a source or a dump file) as its
    first setup files, and what copying it took (with `binaries`' pg_dump)."""
    started = time.monotonic()
    if ab.source_dsn:
        assert size is not None
        copied = dump_source(binaries, ab.source_dsn, ab.tables, folder, ab.sample)
        how = (
            f"pg_dump of {ab.sample:g}% of the big tables' rows"
            if ab.sample is not None
            else f"pg_dump, one job, one snapshot, {LOGICAL}"
        )
    else:
        assert ab.dump is not None
        copied = script_of_dump(binaries, ab.dump, folder)
        how = f"the dump file {ab.dump.name}"
    seconds = time.monotonic() - started
    for option, columns in copied.left_out.items():
        err.print(
            f"pgopt: note: column option {option} left out of the copy "
            f"({columns} columns): PostgreSQL does not define it",
            highlight=False,
        )
    for relation, why in copied.relations_left_out.items():
        err.print(f"pgopt: note: {one_line(relation)} left out of the copy: {one_line(why)}")
    for table, (rows, sampled) in copied.sampled.items():
        if sampled:
            err.print(f"pgopt: sampled {one_line(table)}: {plural(rows, 'row')} copied")
    err.print(f"pgopt: copied in {seconds:.1f}s", highlight=False)
    copy = DataCopy(seconds, size.database_bytes if size else 0, how)
    return replace(ab, setup=(*copied.setup, *ab.setup)), copy
