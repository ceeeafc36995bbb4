"""`pgopt ab` as a library: one A/B run from its spec and typed options, called by the
command line and by every proof and measurement that runs an A/B (advise --prove,
the index proof, tune --measure). The synthesized workload and the copy of the
source first, then the lab through the lab engine."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.text import Text

from .. import machine
from ..binaries import CLIENT_PROGRAMS, PgBinaries, find_binaries
from ..consoles import err, out
from ..errors import BenchError, UsageError
from ..lab.across import shared_settings
from ..model.result import LabResult
from ..redact import redact_dsn
from ..replay.from_source import synthesize_from
from ..replay.synthesize import Synthesis
from ..replay.workload_files import write_workload
from ..report.fmt import format_bytes
from ..running.launch import run_lab
from ..running.options import RunOptions
from ..servers import read_only
from ..servers.binary_facts import embedded_facts
from ..servers.dsn import hide_passwords
from ..servers.embedded import default_workdir_base
from ..source.settings import carried, read_settings
from ..store import new_run_dir
from .across_copy import check_dump_script, copy_binaries
from .copying import CopyPlan, copy_data, plan_copy, why_not_physical
from .data_size import CopySize, check_disk, copy_size, read_tables
from .lab import StepsOf, ab_lab
from .reading import DEFAULT_PACE, CopyPace, synthesis_reads
from .replayed import as_the_source_ran, replay_spec, say_synthesis
from .spec import AbSpec


@dataclass(frozen=True)
class AbOptions:
    """How to run an A/B: the lab run's options, and for a synthesized workload how to
    read the source (seconds watching it, a log capture, seconds of its log pgopt
    captures), or the synthesis itself when
    the caller read it already (advise --prove missing-index reads it before anything
    of pgopt's runs on the source); the pace of a physical copy of it."""

    run: RunOptions = field(default_factory=RunOptions)
    source_sample: float = 0.0
    source_log: Path | None = None
    source_capture: float = 0.0  # seconds of the source's own log, taken by pgopt
    synthesis: Synthesis | None = None
    source_settings: bool = True  # A and B start from the source's settings (not tune's)
    pace: CopyPace = DEFAULT_PACE  # a physical copy's checkpoint and rate

    @classmethod
    def proof(
        cls,
        reps: int | None,
        out_dir: Path,
        synthesis: Synthesis | None = None,
        pace: CopyPace = DEFAULT_PACE,
    ) -> AbOptions:
        """How a proof's A/B runs (advise --prove): `reps` rounds (None: until decided),
        into `out_dir`, on a throwaway server; `synthesis`: the source's workload, read
        already; `pace`: a physical copy's."""
        return cls(RunOptions(reps=reps, out_dir=out_dir), synthesis=synthesis, pace=pace)


def run_ab(ab: AbSpec, options: AbOptions, steps_of: StepsOf | None = None) -> LabResult | None:
    """Run an A/B (`steps_of`: a caller's own steps from A's, as tune --measure's);
    None for --dry-run."""
    run = options.run.with_sides()
    if ab.source_dsn:
        hide_passwords(ab.source_dsn)
    if run.margin is None and ab.margin is not None:
        run = replace(run, margin=ab.margin)
    base = run.workdir or default_workdir_base()
    with tempfile.TemporaryDirectory(prefix="pgopt-ab-", dir=base) as folder:
        replay, run_dir, copy, size, binaries = None, None, None, None, None
        if (ab.source_dsn or ab.dump) and not run.dry_run:
            binaries = copy_binaries(run.sides, ab.source_dsn, ab.dump) or find_binaries(
                run.pg_bin, need=CLIENT_PROGRAMS
            )
            # a physical copy that cannot be is refused before the source is watched
            why = why_not_physical(ab, run, binaries) if ab.copy == "physical" else None
            if why is not None:
                raise UsageError(f"--copy physical: {why}")
        if ab.synthesize:
            assert ab.source_dsn is not None
            watch_s = options.source_sample if options.source_log is None else 0.0
            reads = synthesis_reads(redact_dsn(ab.source_dsn), watch_s, options.source_capture)
            if options.synthesis is None and reads is not None:
                err.print(f"pgopt: will read {reads}", markup=False, soft_wrap=True)
            synthesis = options.synthesis or synthesize_from(
                ab.source_dsn,
                ab.cover / 100,
                options.source_sample,
                options.source_log,
                options.source_capture,
            )
            if not run.dry_run:
                run_dir = new_run_dir("ab", run.out_dir)
            scripts, keys = write_workload(synthesis, (run_dir or Path(folder)) / "workload")
            given = "clients" in ab.run
            ab = as_the_source_ran(replace(ab, scripts=scripts), synthesis, run.clients)
            if keys is not None:
                ab = replace(ab, setup=(*ab.setup, keys))
            replay = replay_spec(synthesis, ab, run.clients, given)
            say_synthesis(synthesis, run_dir)
        heap_bytes, plan = 0, CopyPlan(False)
        if ab.source_dsn:
            tables = read_tables(ab.source_dsn)
            size = check_disk(tables, ab.tables, ab.sample, Path(folder), server_here=not run.dsn)
            heap_bytes = copy_size(tables, ab.tables, None).dump_bytes  # a sample reads all
        target = None
        if ab.source_dsn or ab.dump:
            binaries = binaries or copy_binaries(run.sides, ab.source_dsn, ab.dump)
            binaries = binaries or find_binaries(run.pg_bin, need=CLIENT_PROGRAMS)
            plan = plan_copy(ab, run, binaries, Path(folder), options.pace, heap_bytes)
            if run.dry_run:
                _say_copy(size, plan, base, server_here=not run.dsn)
            else:
                copied = copy_data(ab, run, binaries, Path(folder), size, plan)
                ab, copy, target = copied.ab, copied.copy, copied.target
                if ab.source_dsn and options.source_settings and not run.dsn:
                    ab = with_source_settings(ab, run, binaries)
                if ab.dump:
                    check_dump_script(run.sides, ab.setup[0])
        lab = ab_lab(ab, Path(folder), steps_of, replay, copy)
        try:
            data_bytes = size.database_bytes if size else None
            copy_s = plan.read.transfer_s if plan.read is not None else None
            result = run_lab(lab, run, run_dir, data_bytes=data_bytes, target=target, copy_s=copy_s)
        except BenchError as e:
            # exit 2, not 1: to a CI job, 1 is the gate's regression
            raise UsageError(f"the workload failed on the copy: {e}") from e
    return result


def with_both_settings(ab: AbSpec, both: dict[str, str], run: RunOptions) -> AbSpec:
    """The settings given to A and B both (`--setting`), under each variant's own;
    across versions, each side only those its version has (the others said, and
    applied on the other)."""
    if not both:
        return ab
    pair = run.with_sides().sides
    if pair is None:
        settings = ({**both, **ab.a.settings}, {**both, **ab.b.settings})
    else:
        own = (ab.a.settings, ab.b.settings)
        settings, left_out = shared_settings(both, own, (pair[0][0], pair[1][0]))
        for note in left_out:
            err.print(f"pgopt: note: {note}", highlight=False)
    a, b = (replace(v, settings=s) for v, s in zip((ab.a, ab.b), settings, strict=True))
    return replace(ab, a=a, b=b)


def with_source_settings(ab: AbSpec, run: RunOptions, binaries: PgBinaries) -> AbSpec:
    """A and B with the source's own settings under their own (source/settings.py),
    those the throwaway server's version (each side's, across versions) knows."""
    assert ab.source_dsn is not None
    if run.sides is not None:
        known = run.sides[0][0].settings & run.sides[1][0].settings
    else:
        known = frozenset(embedded_facts(binaries).contexts)
    with read_only.connect(ab.source_dsn, "ab") as conn:
        rows = read_settings(conn)
    source = carried(rows, known, machine.memory_bytes())
    err.print(f"pgopt: {source.describe()}", highlight=False)
    for note in source.notes:
        err.print(f"pgopt: note: {note}", highlight=False)
    a, b = (replace(v, settings={**source.values, **v.settings}) for v in (ab.a, ab.b))
    return replace(ab, a=a, b=b)


def _say_copy(size: CopySize | None, plan: CopyPlan, folder: Path, *, server_here: bool) -> None:
    """--dry-run: how big the copy will be, where it goes, what it reads from the source."""
    if size is not None:
        out.print(_copy_line(size, folder, server_here=server_here))
    if plan.read is not None:
        reads = plan.read.describe()
        out.print(f"source: the run will read {reads}", markup=False, soft_wrap=True)


def _copy_line(size: CopySize, folder: Path, *, server_here: bool) -> Text:
    """--dry-run: how big the copy will be, and where it goes."""
    free = format_bytes(shutil.disk_usage(folder).free)
    if server_here:
        where = f"at most {format_bytes(size.local_bytes)} on disk in {folder} ({free} free)"
    else:
        where = (
            f"the dump {format_bytes(size.dump_bytes)} in {folder} ({free} free); on the "
            f"server of --dsn, two templates and a clone of {format_bytes(size.database_bytes)}"
            " each"
        )
    return Text(f"copy: about {format_bytes(size.database_bytes)} once restored; {where}")
