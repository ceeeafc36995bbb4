"""Run a lab from command-line options, the same way for every command that runs one
(`lab run`, `ab`): the options they share, the target (embedded or --dsn), the
session, the summary and the files; or, with --dry-run, the plan alone."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.markup import escape

from ..binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from ..engine.estimate import estimate
from ..engine.plan import plan_steps
from ..errors import UsageError
from ..lab.across import across
from ..lab.spec import Lab
from ..model.result import LabResult
from ..params import (
    LATENCY_RUNS,
    RunParams,
    check_overrides,
    quick_steps,
    resolve_params,
    select_steps,
)
from ..redact import redact_dsn, redactor
from ..report.terminal import print_summary
from ..running.progress import ConsoleDisplay
from ..running.session import run_session
from ..servers.attached import AttachedTarget
from ..servers.base import Target
from ..servers.binary_facts import embedded_facts
from ..servers.embedded import EmbeddedTarget
from ..servers.facts import both
from ..store import new_run_dir
from .across import Pair, servers_of, sides_of
from .app import err, out, say_written

F = TypeVar("F", bound=Callable[..., Any])

RUN_OPTIONS = (
    click.option("--quick", is_flag=True, help="Few short reps at a small scale (demos, CI)."),
    click.option("--duration", type=int, help="Seconds per timed run."),
    click.option(
        "--reps",
        help="Rounds: 'auto' (look after 4, 6, 8, 10 and stop when decided) or a fixed count.",
    ),
    click.option(
        "--margin",
        type=float,
        help="Smallest change that matters, in percent (default 3): within it, 'no-change'.",
    ),
    click.option(
        "--clients", type=int, help="pgbench clients for every step (client sweeps keep theirs)."
    ),
    click.option("--dsn", help="Run on your server (pgopt works in its own database pgopt_lab)."),
    click.option("--allow-settings", is_flag=True, help="With --dsn: let pgopt change settings."),
    click.option("--pg-bin", type=str, help="Folder of PostgreSQL programs to use."),
    click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Folder for this run."),
    click.option("--seed", type=int, default=1, show_default=True, help="Random seed."),
    click.option(
        "--workdir", type=click.Path(path_type=Path), help="Where the embedded server lives."
    ),
    click.option(
        "--keep", is_flag=True, help="Leave the server (or pgopt_lab) in place afterwards."
    ),
    click.option(
        "--no-sampler", is_flag=True, help="Do not sample wait events (to measure its cost)."
    ),
    click.option(
        "--latencies",
        type=click.Choice(LATENCY_RUNS),
        default="first",
        show_default=True,
        help="Runs in which pgbench times every transaction and statement (latency "
        "percentiles, throughput per second, stall checks): the first round's, all "
        "(about 2% slower where pgbench is the bottleneck), or none.",
    ),
    click.option(
        "--dry-run", is_flag=True, help="Print the plan (steps, rounds, orders) and start nothing."
    ),
)


def run_options(command: F) -> F:
    """The options of every command that runs a lab, in the order --help shows them."""
    for option in reversed(RUN_OPTIONS):
        command = option(command)
    return command


def check_run_options(options: dict[str, Any]) -> None:
    """Refuse combinations and numbers that make no sense, before any server starts;
    keep a --dsn password out of all output."""
    check_overrides(
        scale=options.get("scale"),
        duration=options["duration"],
        clients=options["clients"],
        margin=options["margin"],
        reps=options["reps"],
    )
    if options["allow_settings"] and not options["dsn"]:
        raise UsageError("--allow-settings goes with --dsn")
    if options["dsn"]:
        redactor.add(password_of(options["dsn"]))
    for dsn in options.get("standby_dsns") or ():
        if not options["dsn"]:
            raise UsageError("--standby-dsn goes with --dsn (the primary of those standbys)")
        redactor.add(password_of(dsn))


def password_of(dsn: str) -> str | None:
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


def run_lab(
    item: Lab,
    options: dict[str, Any],
    run_dir: Path | None = None,
    *,
    data_bytes: int | None = None,
) -> LabResult | None:
    """Run `item` as the options say and print its summary; None for --dry-run. The
    run's folder is `run_dir` when the caller made it already (to put files in it);
    `data_bytes`: the size of the user's data it copies (pgopt ab), for --dry-run."""
    steps = options.get("steps")
    names = [s.strip() for s in steps.split(",")] if steps else None
    pair = sides_of(options)
    if pair is not None:  # each chosen step on both servers: they are all the steps now
        chosen = select_steps(item, names or quick_steps(item, options["quick"]))
        item, names = across(item, (pair[0][0], pair[1][0]), chosen), ["all"]
    params = resolve_params(
        item,
        quick=options["quick"],
        scale=options.get("scale"),
        duration=options["duration"],
        reps=options["reps"],
        clients=options["clients"],
        seed=options["seed"],
        steps=names,
        sample_waits=not options["no_sampler"],
        ram=options.get("ram"),
        redis_url=options.get("redis_url"),
        margin=options["margin"],
        latencies=options["latencies"],
        standby_dsns=tuple(options.get("standby_dsns") or ()),
    )
    display = ConsoleDisplay(err, item.name)
    if options["dry_run"]:
        _print_plan(item, params, options, data_bytes, pair)
        for side, binaries in pair or ():
            out.print(
                f"server {side.name}: PostgreSQL {side.version} ({binaries.bindir}), "
                "a throwaway server of its own",
                highlight=False,
            )
        return None
    servers = servers_of(pair, options, display.message) if pair else None
    target = servers["a"] if servers else _make_target(options, display.message)
    run_dir = run_dir or new_run_dir(item.name, options["out_dir"])
    session = run_session(
        item, params, target, run_dir, display, command=command_line(), servers=servers
    )
    print_summary(out, session.result)
    out.print(f"result: {session.result_path}")
    say_written(session.reports)
    return session.result


def _print_plan(
    item: Lab,
    params: RunParams,
    options: dict[str, Any],
    data_bytes: int | None,
    pair: Pair | None = None,
) -> None:
    """`--dry-run`: the plan, from the server's facts read without starting a server
    (the embedded one's from its binaries; a --dsn server's in a read-only session;
    across servers, both embedded ones')."""
    if pair is not None:
        (a, a_bin), (b, b_bin) = pair
        facts = both(embedded_facts(a_bin), embedded_facts(b_bin))
        where = f"embedded PostgreSQL {a.version} (a) and {b.version} (b), not started"
    elif options["dsn"]:
        binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS)
        facts = AttachedTarget(
            binaries, options["dsn"], allow_settings=options["allow_settings"]
        ).peek()
        where = f"the server of --dsn (PostgreSQL {facts.version_num // 10000})"
    else:
        binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
        facts = embedded_facts(binaries)
        where = f"an embedded PostgreSQL {binaries.version} (not started)"
    plan = plan_steps(item, params, facts)
    out.print(f"[bold]{escape(item.name)}[/]: plan for {escape(where)}", highlight=False)
    for line in plan.describe():
        out.print(escape(line), highlight=False)
    time = estimate(item, params, plan, data_bytes).describe()
    out.print(f"time: {time}", markup=False, highlight=False)
    probes = [s.name for s in item.steps if s.probe and s.name in params.steps]
    if probes:
        out.print(f"probes checked when the run starts: {', '.join(probes)}", highlight=False)


def command_line() -> str:
    """The command as typed, each DSN's password redacted (for a report's Reproduce)."""
    return "pgopt " + " ".join(shlex.quote(redact_dsn(a)) for a in sys.argv[1:])
