"""Run a lab as the options say, the same way for every command that runs one (`lab
run`, `ab`, `tune --measure`, advise's proofs): the target (embedded, --dsn, or the
two servers of --a-pg-bin/--b-pg-bin), the session, the summary and the files; or,
with --dry-run, the plan alone."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from rich.markup import escape

from ..binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from ..consoles import err, out, say_written
from ..engine.context import check_figures
from ..engine.estimate import estimate
from ..engine.plan import plan_steps
from ..errors import UsageError
from ..lab.across import across
from ..lab.spec import Lab
from ..model.result import LabResult
from ..params import RunParams, quick_steps, resolve_params, select_steps
from ..redact import redact_dsn
from ..report.terminal import print_summary
from ..servers.attached import AttachedTarget
from ..servers.base import Target
from ..servers.binary_facts import embedded_facts
from ..servers.embedded import EmbeddedTarget
from ..servers.facts import both
from ..store import new_run_dir
from .across import Pair, servers_of
from .options import RunOptions
from .progress import ConsoleDisplay
from .session import run_session


def make_target(options: RunOptions, say: Callable[[str], None]) -> Target:
    """The server a lab runs on: the user's (--dsn), or a throwaway embedded one."""
    if options.dsn:
        binaries = find_binaries(options.pg_bin, need=CLIENT_PROGRAMS)
        return AttachedTarget(
            binaries,
            options.dsn,
            allow_settings=options.allow_settings,
            keep=options.keep,
            say=say,
        )
    binaries = find_binaries(options.pg_bin, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    workdir = options.workdir
    if workdir is not None and not workdir.is_dir():
        raise UsageError(f"--workdir {workdir} is not a folder")
    return EmbeddedTarget(binaries, workdir=workdir, keep=options.keep, say=say)


def run_lab(
    item: Lab,
    options: RunOptions,
    run_dir: Path | None = None,
    *,
    data_bytes: int | None = None,
    target: Target | None = None,
    copy_s: float | None = None,
) -> LabResult | None:
    """Run `item` as the options say and print its summary; None for --dry-run. The
    run's folder is `run_dir` when the caller made it already (to put files in it);
    `data_bytes`: the size of the user's data it copies (pgopt ab), for --dry-run, and
    `copy_s` the copy's seconds where its pace is known; `target`: the server to run
    on, when the caller made it (a physical copy)."""
    options = options.with_sides()
    names = [s.strip() for s in options.steps.split(",")] if options.steps else None
    pair = options.sides
    if pair is not None:  # each chosen step on both servers: they are all the steps now
        chosen = select_steps(item, names or quick_steps(item, options.quick))
        item, names = across(item, (pair[0][0], pair[1][0]), chosen), ["all"]
    params = resolve_params(
        item,
        quick=options.quick,
        scale=options.scale,
        duration=options.duration,
        warmup=options.warmup,
        slice_s=options.slice_s,
        reps=options.reps,
        clients=options.clients,
        seed=options.seed,
        steps=names,
        sample_waits=not options.no_sampler,
        ram=options.ram,
        redis_url=options.redis_url,
        margin=options.margin,
        latencies=options.latencies,
        standby_dsns=options.standby_dsns,
    )
    check_figures(item, params)  # a divisor of 0 on this machine: before any server starts
    display = ConsoleDisplay(err, item.name)
    if options.dry_run:
        _print_plan(item, params, options, data_bytes, pair, copy_s)
        for side, binaries in pair or ():
            out.print(
                f"server {side.name}: PostgreSQL {side.version} ({binaries.bindir}), "
                "a throwaway server of its own",
                highlight=False,
            )
        return None
    servers = servers_of(pair, options.workdir, options.keep, display.message) if pair else None
    if target is None:
        target = servers["a"] if servers else make_target(options, display.message)
    run_dir = run_dir or new_run_dir(item.name, options.out_dir)
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
    options: RunOptions,
    data_bytes: int | None,
    pair: Pair | None = None,
    copy_s: float | None = None,
) -> None:
    """`--dry-run`: the plan, from the server's facts read without starting a server
    (the embedded one's from its binaries; a --dsn server's in a read-only session;
    across servers, both embedded ones')."""
    if pair is not None:
        (a, a_bin), (b, b_bin) = pair
        facts = both(embedded_facts(a_bin), embedded_facts(b_bin))
        where = f"embedded PostgreSQL {a.version} (a) and {b.version} (b), not started"
    elif options.dsn:
        binaries = find_binaries(options.pg_bin, need=CLIENT_PROGRAMS)
        facts = AttachedTarget(binaries, options.dsn, allow_settings=options.allow_settings).peek()
        where = f"the server of --dsn (PostgreSQL {facts.version_num // 10000})"
    else:
        binaries = find_binaries(options.pg_bin, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
        facts = embedded_facts(binaries)
        where = f"an embedded PostgreSQL {binaries.version} (not started)"
    plan = plan_steps(item, params, facts)
    out.print(f"[bold]{escape(item.name)}[/]: plan for {escape(where)}", markup=True)
    for line in plan.describe():
        out.print(line)
    time = estimate(item, params, plan, data_bytes, copy_s).describe()
    out.print(f"time: {time}", markup=False, highlight=False)
    probes = [s.name for s in item.steps if s.probe and s.name in params.steps]
    if probes:
        out.print(f"probes checked when the run starts: {', '.join(probes)}", highlight=False)


def command_line() -> str:
    """The command as typed, each DSN's password redacted (for a report's Reproduce)."""
    return "pgopt " + " ".join(shlex.quote(redact_dsn(a)) for a in sys.argv[1:])
