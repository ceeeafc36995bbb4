"""The command line: parse, wire the parts together, map errors to exit codes.

Exit codes: 0 ok, 1 a check failed, 2 usage or input error, 130 interrupted.
Every error is one line on stderr, `pgopt: error: ...`, never a traceback.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import click
import psycopg
from rich.console import Console
from rich.markup import escape

from . import __version__
from .binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from .errors import Interrupted, PgoptError, UsageError
from .experiment import Experiment
from .lab import builtin_labs, resolve_lab
from .lab.catalog import DEMO_ORDER
from .params import resolve_params
from .progress import ConsoleDisplay
from .redact import redact_dsn, redactor
from .report.compare import compare_results, comparison_notes, comparison_table
from .report.listing import runs_table
from .report.terminal import print_summary
from .report.write import write_reports
from .result import build_result
from .store import DEFAULT_RUNS_DIR, list_runs, load_result, new_run_dir, write_result
from .target.attached import AttachedTarget
from .target.base import Target
from .target.embedded import EmbeddedTarget

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _console(stderr: bool = False) -> Console:
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:  # logs and pipes: wide enough for the summary table
        console = Console(stderr=stderr, highlight=False, width=140)
    return console


out = _console()
err = _console(stderr=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="pgopt")
def cli() -> None:
    """pgopt: will this change make PostgreSQL faster, by how much, and why?"""


@cli.group()
def lab() -> None:
    """List and run labs."""


@lab.command("list")
def lab_list() -> None:
    """Labs with one-line descriptions."""
    for item in builtin_labs():
        steps = ", ".join(s.name for s in item.steps)
        out.print(f"[bold]{item.name:<10}[/] {item.title}")
        out.print(f"{'':<10} [dim]steps: {steps}[/]")


@lab.command("run")
@click.argument("name")
@click.option("--quick", is_flag=True, help="Few short reps at a small scale (demos, CI).")
@click.option("--scale", type=float, help="Dataset size factor (the lab says what 1 means).")
@click.option("--duration", type=int, help="Seconds per timed run.")
@click.option("--reps", type=int, help="Timed runs per step.")
@click.option(
    "--clients", type=int, help="pgbench clients for every step (client sweeps keep theirs)."
)
@click.option("--dsn", help="Run on your server (pgopt works in its own database pgopt_lab).")
@click.option("--allow-settings", is_flag=True, help="With --dsn: let pgopt change settings.")
@click.option("--pg-bin", type=str, help="Folder of PostgreSQL programs to use.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Folder for this run.")
@click.option("--steps", help="Comma-separated steps to run (the baseline always runs).")
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed.")
@click.option("--workdir", type=click.Path(path_type=Path), help="Where the embedded server lives.")
@click.option("--keep", is_flag=True, help="Leave the server (or pgopt_lab) in place afterwards.")
@click.option("--ram", help="Memory the lab's settings formulas assume (e.g. 8GB).")
@click.option("--redis", "redis_url", help="Redis for labs that compare with it (redis://...).")
@click.option("--no-sampler", is_flag=True, help="Do not sample wait events (to measure its cost).")
def lab_run(name: str, **options: Any) -> None:
    """Run lab NAME (a built-in lab, a lab folder, or `all`)."""
    if options["allow_settings"] and not options["dsn"]:
        raise UsageError("--allow-settings goes with --dsn")
    if options["dsn"]:
        redactor.add(_password_of(options["dsn"]))
    if name != "all":
        if not _run_one(resolve_lab(name), options):
            raise _ChecksFailed()
        return
    # Every lab, one after the other; one lab's failure does not stop the others.
    labs = [item for item in builtin_labs() if item.name in DEMO_ORDER]
    if options["steps"]:
        raise UsageError("--steps names the steps of one lab, not of `all`")
    outcomes: list[tuple[str, str]] = []
    for item in labs:
        out_dir = options["out_dir"] / item.name if options["out_dir"] is not None else None
        try:
            passed = _run_one(item, {**options, "out_dir": out_dir})
            outcomes.append((item.name, "ok" if passed else "a check failed"))
        except PgoptError as e:
            _error(f"[{item.name}] {e}")
            outcomes.append((item.name, f"error: {str(e).splitlines()[0]}"))
    for lab_name, status in outcomes:
        out.print(f"{lab_name:<10} {escape(status)}")
    if any(status.startswith("error") for _, status in outcomes):
        raise _LabsFailed()
    if any(status != "ok" for _, status in outcomes):
        raise _ChecksFailed()


def _password_of(dsn: str) -> str | None:
    from psycopg.conninfo import conninfo_to_dict

    try:
        value = conninfo_to_dict(dsn).get("password")
    except Exception:
        return None
    return str(value) if value else None


def _make_target(options: dict[str, Any], say: Callable[[str], None]) -> Target:
    if options["dsn"]:
        binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS)
        return AttachedTarget(
            binaries,
            options["dsn"],
            allow_settings=options["allow_settings"],
            keep=options["keep"],
            say=say,
        )
    binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    workdir = options["workdir"]
    if workdir is not None and not workdir.is_dir():
        raise UsageError(f"--workdir {workdir} is not a folder")
    return EmbeddedTarget(binaries, workdir=workdir, keep=options["keep"], say=say)


def _run_one(item: Any, options: dict[str, Any]) -> bool:
    steps = [s.strip() for s in options["steps"].split(",")] if options["steps"] else None
    params = resolve_params(
        item,
        quick=options["quick"],
        scale=options["scale"],
        duration=options["duration"],
        reps=options["reps"],
        clients=options["clients"],
        seed=options["seed"],
        steps=steps,
        sample_waits=not options["no_sampler"],
        ram=options["ram"],
        redis_url=options["redis_url"],
    )
    display = ConsoleDisplay(err, item.name)
    target = _make_target(options, display.message)
    run_dir = new_run_dir(item.name, options["out_dir"])
    with target:
        per_run = "" if item.metric.source == "phases" else f" × {params.duration_s}s"
        display.message(
            f"{target.kind} PostgreSQL {target.server_version}, "
            f"{len(params.steps)} steps × {params.reps} reps{per_run}, "
            f"scale {params.scale:g}; results in {run_dir}"
        )
        experiment = Experiment(item, params, target, run_dir, display)
        try:
            result = build_result(experiment.run(), command=_command_line())
        except BaseException as e:
            _save_partial(experiment, run_dir, e)
            raise
        result["target"]["non_default_settings"] = target.non_default_settings()
    path = write_result(run_dir, result)
    print_summary(out, result)
    out.print(f"result: {path}")
    _say_written(write_reports(run_dir, result))
    return bool(result["passed"])


def _save_partial(experiment: Experiment, run_dir: Path, error: BaseException) -> None:
    """Keep the runs that finished before an error or an interruption."""
    outcome = experiment.outcome()
    if not outcome.steps:
        return
    result = build_result(outcome, command=_command_line())
    result["complete"] = False
    result["error"] = redactor(str(error) or type(error).__name__)
    path = write_result(run_dir, result)
    write_reports(run_dir, result)
    err.print(f"partial result (finished runs only): {path}", highlight=False)


def _command_line() -> str:
    return "pgopt " + " ".join(shlex.quote(redact_dsn(a)) for a in sys.argv[1:])


@cli.command("runs")
@click.option(
    "--dir",
    "runs_dir",
    type=click.Path(path_type=Path),
    default=DEFAULT_RUNS_DIR,
    show_default=True,
    help="Folder of stored runs.",
)
def runs_cmd(runs_dir: Path) -> None:
    """List stored runs: date, lab, steps, headline ratio, status."""
    runs = list_runs(runs_dir)
    if not runs:
        out.print(f"no runs in {runs_dir}")
        return
    out.print(runs_table(runs))


@cli.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--html", "html", is_flag=True, help="Write report.html (with plots).")
@click.option("--md", "md", is_flag=True, help="Write report.md.")
def report_cmd(run_dir: Path, html: bool, md: bool) -> None:
    """Re-render a stored run from its result.json (no server needed).

    Writes report.md and report.html next to result.json (only the ones asked
    for with --md/--html) and prints the summary.
    """
    result = load_result(run_dir)
    folder = run_dir if run_dir.is_dir() else run_dir.parent
    both = not (html or md)
    print_summary(out, result)
    _say_written(write_reports(folder, result, markdown=md or both, html=html or both))


@cli.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
def compare_cmd(run_a: Path, run_b: Path) -> None:
    """Two runs of one lab side by side: B's medians over A's, with 95% intervals."""
    comparison = compare_results(load_result(run_a), load_result(run_b))
    out.print(comparison_table(comparison, str(run_a), str(run_b)))
    for note in comparison_notes(comparison):
        out.print(f"[yellow]note[/] {escape(note)}")


def _say_written(paths: list[Path]) -> None:
    for path in paths:
        out.print(f"report: {path}")


class _ChecksFailed(Exception):
    """A run completed but a check failed: exit code 1."""


class _LabsFailed(Exception):
    """`lab run all`: some lab stopped with an error (already printed): exit code 2."""


def _install_signal_handlers() -> None:
    def raise_interrupted(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, raise_interrupted)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with `argv`; return the exit code (tests call this directly)."""
    _install_signal_handlers()
    try:
        cli.main(
            args=list(argv) if argv is not None else None, prog_name="pgopt", standalone_mode=False
        )
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except (KeyboardInterrupt, Interrupted, click.Abort):
        err.print("pgopt: interrupted; what pgopt started was stopped and removed", highlight=False)
        return EXIT_INTERRUPTED
    except click.ClickException as e:
        _error(e.format_message())
        return EXIT_USAGE
    except _ChecksFailed:
        return EXIT_CHECK_FAILED
    except _LabsFailed:
        return EXIT_USAGE
    except PgoptError as e:
        _error(str(e))
        return e.exit_code
    except psycopg.Error as e:
        _error(f"database error: {e}")
        return EXIT_USAGE
    except OSError as e:
        _error(f"{e.strerror or e}: {e.filename}" if e.filename else str(e))
        return EXIT_USAGE
    except Exception as e:
        if os.environ.get("PGOPT_DEBUG"):
            raise
        _error(f"internal error: {type(e).__name__}: {e} (PGOPT_DEBUG=1 shows the traceback)")
        return EXIT_USAGE
    return EXIT_OK


def _error(message: str) -> None:
    lines = redactor(message).strip().splitlines() or ["unknown error"]
    click.echo(f"pgopt: error: {lines[0]}", err=True)
    for line in lines[1:]:
        click.echo(f"  {line}", err=True)


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
