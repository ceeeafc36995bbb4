"""`pgopt ab`: A/B of the user's own workload on their data (ab/run.py runs it)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import click

from ..ab.run import AbOptions, run_ab, with_both_settings
from ..ab.spec import AbFlags, flag_settings, read_spec
from ..errors import Failed, UsageError
from ..gate.decision import Gate, GateItem, evaluate
from ..model.result import LabResult
from ..running.options import RunOptions
from .across import across_options
from .connection import DSN
from .copy_pace import copy_pace_options, pace_of
from .gate_output import finish_gate, gate_of, gate_options
from .running import run_options


@click.command("ab")
@click.argument("spec", required=False, type=click.Path(path_type=Path))
@click.option("--title", help="What this A/B asks, for the report.")
@click.option(
    "--source-dsn", **DSN, help="Your database, copied (read only: --copy says how) as the data."
)
@click.option("--table", "tables", multiple=True, help="Copy only tables matching (repeatable).")
@click.option(
    "--sample",
    type=float,
    metavar="PCT",
    help="Copy PCT percent of the rows of each table of 1 MiB or more, not all.",
)
@click.option(
    "--copy",
    type=click.Choice(["auto", "physical", "logical"]),
    help="How --source-dsn is copied: physical (pg_basebackup: as old as the source), "
    "logical (pg_dump), or auto (physical where it can be; the default).",
)
@copy_pace_options("A")
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
    "--source-capture",
    type=click.FloatRange(min=0, min_open=True),
    metavar="S",
    help="With --synthesize: have the source log a share of its transactions for S "
    "seconds, with their values (prepared statements' too), and replay from that log "
    "(a superuser and logging_collector = on; the settings are put back after).",
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
    run = RunOptions.of(options).checked()
    regression, require_decision, junit = (options.pop(k) for k in GATE_KEYS)
    require_fidelity = options.pop("require_fidelity")
    flags = AbFlags(**{f.name: options.pop(f.name) for f in fields(AbFlags)})
    both = flag_settings(options.pop("both_settings"), "--setting")
    ab = with_both_settings(read_spec(spec, flags, Path.cwd()), both, run)
    gate = gate_of(
        regression if regression is not None else _fraction(ab.fail_on_regression),
        require_decision or ab.require_decision,
        junit,
    )
    if require_fidelity and not ab.synthesize:
        raise UsageError("--require-fidelity judges a synthesized workload: add --synthesize")
    for flag in ("source_log", "source_capture"):
        if options.get(flag) is not None and not ab.synthesize:
            raise UsageError(
                f"--{flag.replace('_', '-')} is read to synthesize the workload: add --synthesize"
            )
    if options.get("source_log") is not None and options.get("source_capture") is not None:
        raise UsageError("--source-log and --source-capture are two captures: give one")
    ab_options = AbOptions(
        run, options["source_sample"], options["source_log"], options["source_capture"] or 0.0,
        pace=pace_of(options),
    )  # fmt: skip
    result = run_ab(ab, ab_options)
    if result is not None and gate.on:
        _gate(gate, result, junit)
    fidelity = result.fidelity if result is not None else None
    if require_fidelity and fidelity is not None and fidelity.verdict == "unfaithful":
        raise Failed(
            "the replay is unfaithful to the source (--require-fidelity): "
            + "; ".join(fidelity.reasons[:3])
        )


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
