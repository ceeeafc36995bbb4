"""`pgopt ab`: A/B of the user's own workload on their data, through the lab engine."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import click
from rich.text import Text

from .. import machine
from ..ab.data_size import CopySize, check_disk, read_tables
from ..ab.lab import StepsOf, ab_lab
from ..ab.source import dump_source, script_of_dump
from ..ab.spec import AbFlags, AbSpec, flag_settings, read_spec
from ..binaries import CLIENT_PROGRAMS, PgBinaries, find_binaries
from ..errors import BenchError, Failed, UsageError
from ..lab.across import shared_settings
from ..lab.spec import DataCopy
from ..model.result import LabResult
from ..redact import redact_dsn, redactor
from ..replay.source_reader import synthesize_from
from ..replay.workload_files import write_workload
from ..report.fmt import format_bytes
from ..report.gate import Gate, GateItem, evaluate
from ..servers.embedded import default_workdir_base
from ..store import new_run_dir
from ..words import plural
from .ab_synthesis import as_the_source_ran, replay_spec, say_synthesis
from .across import across_options, check_dump_script, copy_binaries, sides_of
from .app import err, out
from .gate_output import finish_gate, gate_of, gate_options
from .running import check_run_options, password_of, run_lab, run_options


@click.command("ab")
@click.argument("spec", required=False, type=click.Path(path_type=Path))
@click.option("--title", help="What this A/B asks, for the report.")
@click.option("--source-dsn", help="Your database, copied with pg_dump (read only) as the data.")
@click.option("--table", "tables", multiple=True, help="Copy only tables matching (repeatable).")
@click.option(
    "--sample",
    type=float,
    metavar="PCT",
    help="Copy PCT percent of the rows of each table of 1 MiB or more, not all.",
)
@click.option("--dump", help="A dump file of your database (pg_dump, any format) as the data.")
@click.option(
    "--setup", multiple=True, help="SQL file that builds the data (repeatable, in order)."
)
@click.option(
    "--synthesize",
    is_flag=True,
    help="Make the workload from the source's pg_stat_statements (with --source-dsn).",
)
@click.option(
    "--cover",
    type=float,
    metavar="PCT",
    help="With --synthesize: take the statements making up PCT of the time (default 90).",
)
@click.option(
    "--source-sample",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    metavar="S",
    help="With --synthesize: seconds watching the source run (statements a commit, "
    "sessions, protocol); 0: not at all.",
)
@click.option(
    "--source-log",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="With --synthesize: a log of the source captured with log_min_duration_statement"
    " = 0 (csvlog, jsonlog or stderr): its transactions and values are replayed.",
)
@click.option(
    "--require-fidelity",
    is_flag=True,
    help="With --synthesize: exit 1 when the replay is unfaithful to the source.",
)
@click.option(
    "--script",
    "scripts",
    multiple=True,
    help="pgbench script of the workload: FILE or FILE@WEIGHT (repeatable).",
)
@click.option("--a-sql", multiple=True, help="SQL applied to A's copy of the data (repeatable).")
@click.option("--b-sql", multiple=True, help="SQL applied to B's copy: an index, a migration.")
@click.option("--a-setting", "a_settings", multiple=True, help="NAME=VALUE for A (repeatable).")
@click.option("--b-setting", "b_settings", multiple=True, help="NAME=VALUE for B (repeatable).")
@click.option(
    "--setting",
    "both_settings",
    multiple=True,
    help="NAME=VALUE for A and B both (repeatable); across versions, where each has it.",
)
@click.option("--a-script", "a_scripts", multiple=True, help="A's own script: FILE[@WEIGHT].")
@click.option("--b-script", "b_scripts", multiple=True, help="B's own script (a rewritten query).")
@gate_options
@run_options
@across_options
def ab_cmd(spec: Path | None, **options: Any) -> None:
    """A/B of your workload: B against A on the same data, in random order per round.

    SPEC is an ab.toml (or a folder holding one); flags add to it. Each timed run
    starts from the data the setup files build, then the variant's SQL: B's index
    or migration never leaks into A's runs.
    """
    check_run_options(options)
    regression, require_decision, junit = (options.pop(k) for k in GATE_KEYS)
    require_fidelity = options.pop("require_fidelity")
    flags = AbFlags(**{f.name: options.pop(f.name) for f in fields(AbFlags)})
    both = flag_settings(options.pop("both_settings"), "--setting")
    ab = with_settings(read_spec(spec, flags, Path.cwd()), both, options)
    if options["margin"] is None and ab.margin is not None:
        options["margin"] = ab.margin
    if ab.source_dsn:
        redactor.add(password_of(ab.source_dsn))
    gate = gate_of(
        regression if regression is not None else _fraction(ab.fail_on_regression),
        require_decision or ab.require_decision,
        junit,
    )
    if require_fidelity and not ab.synthesize:
        raise UsageError("--require-fidelity judges a synthesized workload: add --synthesize")
    if options.get("source_log") is not None and not ab.synthesize:
        raise UsageError("--source-log is read to synthesize the workload: add --synthesize")
    result = run_ab(ab, options)
    if result is not None and gate.on:
        _gate(gate, result, junit)
    fidelity = result.fidelity if result is not None else None
    if require_fidelity and fidelity is not None and fidelity.verdict == "unfaithful":
        raise Failed(
            "the replay is unfaithful to the source (--require-fidelity): "
            + "; ".join(fidelity.reasons[:3])
        )


def with_settings(ab: AbSpec, both: dict[str, str], options: dict[str, Any]) -> AbSpec:
    """The settings given to A and B both, under each variant's own; across versions,
    each side only those its version has (the others said, and applied on the other)."""
    if not both:
        return ab
    pair = sides_of(options)
    if pair is None:
        settings = ({**both, **ab.a.settings}, {**both, **ab.b.settings})
    else:
        own = (ab.a.settings, ab.b.settings)
        settings, left_out = shared_settings(both, own, (pair[0][0], pair[1][0]))
        for note in left_out:
            err.print(f"pgopt: note: {note}", highlight=False)
    a, b = (replace(v, settings=s) for v, s in zip((ab.a, ab.b), settings, strict=True))
    return replace(ab, a=a, b=b)


def run_ab(
    ab: AbSpec, options: dict[str, Any], steps_of: StepsOf | None = None
) -> LabResult | None:
    """Run an A/B as the run options say (also for `advise --prove`, and `tune
    --measure` with its own steps): the synthesized workload and the copy of the
    source first, then the lab; None for --dry-run."""
    base = options.get("workdir") or default_workdir_base()
    with tempfile.TemporaryDirectory(prefix="pgopt-ab-", dir=base) as folder:
        replay, run_dir, copy, size = None, None, None, None
        if ab.synthesize:
            assert ab.source_dsn is not None
            # read now, or before anything of pgopt's ran there (advise --prove missing-index)
            synthesis = options.get("synthesis") or synthesize_from(
                ab.source_dsn,
                ab.cover / 100,
                options.get("source_sample", 0.0),
                options.get("source_log"),
            )
            if not options["dry_run"]:
                run_dir = new_run_dir("ab", options["out_dir"])
            scripts, keys = write_workload(synthesis, (run_dir or Path(folder)) / "workload")
            ab = as_the_source_ran(replace(ab, scripts=scripts), synthesis, options)
            if keys is not None:
                ab = replace(ab, setup=(*ab.setup, keys))
            replay = replay_spec(synthesis, ab, options)
            say_synthesis(synthesis, run_dir)
        if ab.source_dsn:
            size = check_disk(
                read_tables(ab.source_dsn),
                ab.tables,
                ab.sample,
                Path(folder),
                server_here=not options.get("dsn"),
            )
            if options["dry_run"]:
                out.print(_copy_line(size, base, server_here=not options.get("dsn")))
        if (ab.source_dsn or ab.dump) and not options["dry_run"]:
            binaries = copy_binaries(options, ab.source_dsn, ab.dump) or find_binaries(
                options["pg_bin"], need=CLIENT_PROGRAMS
            )
            ab, copy = _with_copy(ab, binaries, Path(folder), size)
            if ab.dump:
                check_dump_script(options, ab.setup[0])
        lab = ab_lab(ab, Path(folder), steps_of, replay, copy)
        try:
            result = run_lab(
                lab, options, run_dir, data_bytes=size.database_bytes if size else None
            )
        except BenchError as e:
            # exit 2, not 1: to a CI job, 1 is the gate's regression
            raise UsageError(f"the workload failed on the copy: {e}") from e
    return result


def _with_copy(
    ab: AbSpec, binaries: PgBinaries, folder: Path, size: CopySize | None
) -> tuple[AbSpec, DataCopy]:
    """The A/B with the copy of the user's database (a source or a dump file) as its
    first setup files, and what copying it took (with `binaries`' pg_dump)."""
    started = time.monotonic()
    if ab.source_dsn:
        assert size is not None
        err.print(
            f"pgopt: copying {redact_dsn(ab.source_dsn)} "
            f"(about {format_bytes(size.database_bytes)} once restored)",
            highlight=False,
        )
        copied = dump_source(binaries, ab.source_dsn, ab.tables, folder, ab.sample)
        how = (
            f"pg_dump of {ab.sample:g}% of the big tables' rows"
            if ab.sample is not None
            else f"pg_dump --jobs {machine.cpu_count()}, one snapshot, restored with pg_restore"
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
    for table, (rows, sampled) in copied.sampled.items():
        if sampled:
            err.print(f"pgopt: sampled {table}: {plural(rows, 'row')} copied", highlight=False)
    err.print(f"pgopt: copied in {seconds:.1f}s", highlight=False)
    copy = DataCopy(seconds, size.database_bytes if size else 0, how)
    return replace(ab, setup=(*copied.setup, *ab.setup)), copy


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


GATE_KEYS = ("regression", "require_decision", "junit")


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else percent / 100


def _gate(gate: Gate, result: LabResult, junit: Path | None) -> None:
    """B against A through the CI gate: exit 1 when it fails."""
    a, b = result.step("a"), result.step("b")
    item = GateItem(
        name=f"B ({b.title}) vs A ({a.title})",
        ratio=b.ratio_vs_previous,
        verdict=b.verdict_vs_previous,
        higher_is_better=result.metric.higher_is_better,
    )
    title = f"pgopt ab: {result.title}"
    finish_gate(evaluate(gate, [item]), junit=junit, suite="pgopt.ab", title=title)
