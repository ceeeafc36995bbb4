"""`pgopt tune`: a configuration for this machine, each value with its reason, held
to the target server's own bounds; `--measure` puts it to the test (tune_measure.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from ..errors import UsageError
from ..machine import read_facts
from ..params import parse_size
from ..store import new_run_dir, write_atomic
from ..target.embedded import default_workdir_base
from ..target.facts import embedded_facts
from ..tune import output, server
from ..tune.facts import ServerSettings
from ..tune.inputs import Given, assemble
from ..tune.measure_lab import WORKLOADS
from ..tune.profile import DB_TYPES, STORAGE, Inputs, derive, profiles
from ..tune.safety import memory_check
from ..tune.settings_check import Checked, Refused, check
from ..tune.storage import probe
from ..words import plural
from .app import err, out, say_written
from .running import check_run_options, run_options
from .tune_measure import measure


@click.command("tune")
@click.option("--ram", help="Model a machine with this much memory (e.g. 16GB).")
@click.option("--cpus", type=click.IntRange(min=1), help="Model a machine with N CPUs.")
@click.option("--storage", type=click.Choice(STORAGE), help="Model this storage, not probe it.")
@click.option("--connections", type=click.IntRange(min=1), help="max_connections to plan for.")
@click.option("--db-size", help="The data's size (default: the server's databases).")
@click.option("--disk-free", help="Free space on the data disk (default: measured).")
@click.option(
    "--profile",
    "profile_name",
    type=click.Choice(["pgopt", "pgtune"]),
    default="pgopt",
    show_default=True,
    help="Whose formulas: pgopt's, or pgtune's published ones.",
)
@click.option(
    "--pgtune-type",
    type=click.Choice(DB_TYPES),
    help="pgtune's database type (default: web; with --measure, the workload's).",
)
@click.option(
    "--format", "fmt", type=click.Choice(output.FORMATS), default="conf", show_default=True
)
@click.option(
    "--measure",
    is_flag=True,
    help="Run the defaults, pgtune's profile and pgopt's on a workload, then an ablation.",
)
@click.option(
    "--workload",
    default="tpcb",
    show_default=True,
    metavar="batch|tpcb|select|AB.toml",
    help="What --measure runs: the batch lab, TPC-B-like, select-only, or your A/B's workload.",
)
@click.option("--scale", type=float, help="The workload's scale (--measure).")
@click.option(
    "--ablation/--no-ablation",
    default=True,
    show_default=True,
    help="After --measure's comparison, which of the winner's settings mattered "
    "(there is a winner only on a decided verdict).",
)
@click.option(
    "--ablate-from",
    type=click.Choice(["pgopt", "pgtune"]),
    help="The profile the ablation starts from, and tune.conf holds, when no profile wins.",
)
@run_options
def tune_cmd(**options: Any) -> None:
    """A configuration for this machine, each value with its reason, checked against the
    server's own pg_settings. Memory and CPUs as a container sees them; the disk
    probed (pg_test_fsync, random and sequential reads). --measure puts pgopt's profile
    and pgtune's to the test against the defaults, and says which settings mattered."""
    check_run_options(options)
    given = given_of(options)  # bad input fails here, before any server starts
    if options["dry_run"]:
        dry_run(options, given)
        return
    target = read_server(options)
    if options["measure"]:
        measure(options, given, target, tune_inputs)
        return
    inputs, sources = tune_inputs(options, given, target)
    profile = profiles()[options["profile_name"]]
    accepted, refused = check(derive(profile, inputs), target.pg_settings)
    memory = memory_check(
        {c.name: c.value for c in accepted},
        target.pg_settings,
        inputs.connections,
        inputs.ram_mb * 2**20,
    )
    lines = [*header(options["profile_name"], inputs, sources), memory.describe()]
    text = render(
        options["fmt"], options["profile_name"], lines, inputs, sources, accepted, refused
    )
    out.print(text, end="", markup=False, highlight=False, soft_wrap=True)
    if options["out_dir"]:
        folder = new_run_dir("tune", options["out_dir"])
        write_atomic(folder / f"tune.{options['fmt']}", text)
        say_written([folder / f"tune.{options['fmt']}"])
    restart = sum(1 for s in accepted if s.restart)
    err.print(
        f"[tune] {plural(len(accepted), 'setting')} ({restart} need a restart), "
        f"{len(refused)} left out",
        markup=False,
    )
    if not memory.fits:
        err.print(f"[tune] warning: {memory.describe()}", markup=False)


PROBE_SECONDS = 8  # the disk probe as measured here: pg_test_fsync, then the reads
READ_SECONDS = 3  # initdb, start, read pg_settings, stop a throwaway server


def dry_run(options: dict[str, Any], given: Given) -> None:
    """What `tune` would do, and for how long, starting nothing: no server, no probe.
    With --measure, the plans of its labs from the profiles as derived for this machine
    (not yet held to the server's bounds, which only a server can tell)."""
    binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    where = (
        "read the settings of the server of --dsn (a read-only session)"
        if options["dsn"]
        else f"start a throwaway PostgreSQL {binaries.version}, read its pg_settings and "
        f"remove it (about {READ_SECONDS} s)"
    )
    probe = (
        "take the storage as --storage gives it"
        if options["storage"] or options["dsn"]
        else f"probe the disk in {default_workdir_base()} (pg_test_fsync, random and "
        f"sequential reads: about {PROBE_SECONDS} s; --storage skips it)"
    )
    out.print(f"pgopt tune would {where}, {probe}, then derive the profile.", highlight=False)
    if not options["measure"]:
        out.print("A dry run starts nothing and measures nothing.", highlight=False)
        return
    facts = embedded_facts(binaries)
    target = ServerSettings(facts.version_num, 100, 0, {})

    def derived_inputs(
        options: dict[str, Any], given: Given, target: ServerSettings
    ) -> tuple[Inputs, dict[str, Any]]:
        return assemble(given, read_facts(), None, target, unmeasured="a dry run")

    measure(options, given, target, derived_inputs, contexts=facts.contexts)


def read_server(options: dict[str, Any]) -> ServerSettings:
    """The target server's settings: --dsn's, or a throwaway embedded server's."""
    if options["dsn"]:
        return server.from_dsn(options["dsn"])
    err.print("[tune] reading the settings of a throwaway server", markup=False)
    binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    return server.from_embedded(binaries)


def given_of(options: dict[str, Any]) -> Given:
    """What the command line gives instead of measuring, checked."""
    if options["measure"] and options["dsn"] and not options["allow_settings"]:
        raise UsageError("--measure with --dsn changes settings: add --allow-settings")
    workload = options["workload"]
    if workload not in WORKLOADS and not Path(workload).exists():
        known = ", ".join(sorted(WORKLOADS))
        raise UsageError(f"--workload {workload}: neither {known} nor an ab.toml")
    ram = parse_size(options["ram"], "--ram") if options["ram"] else None
    if ram is not None and ram < 256 * 2**20:
        raise UsageError(f"--ram {options['ram']}: PostgreSQL needs at least 256MB to tune for")
    return Given(
        ram_bytes=ram,
        cpus=options["cpus"],
        storage=options["storage"],
        connections=options["connections"],
        db_bytes=parse_size(options["db_size"], "--db-size") if options["db_size"] else None,
        disk_free_bytes=(
            parse_size(options["disk_free"], "--disk-free") if options["disk_free"] else None
        ),
        db_type=options["pgtune_type"] or "web",
    )


def tune_inputs(
    options: dict[str, Any], given: Given, target: ServerSettings
) -> tuple[Inputs, dict[str, Any]]:
    storage = None
    if not options["storage"] and not options["dsn"]:
        err.print(
            f"[tune] probing the disk (pg_test_fsync, random and sequential reads): about "
            f"{PROBE_SECONDS} s; --storage ssd|nvme|hdd skips it",
            markup=False,
        )
        binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS)
        fsync = binaries.path("pg_test_fsync") if binaries.has("pg_test_fsync") else None
        storage = probe(default_workdir_base(), fsync)
    return assemble(given, read_facts(), storage, target)


def header(profile: str, inputs: Inputs, sources: dict[str, Any]) -> list[str]:
    return [
        f"pgopt tune: the {profile} profile for PostgreSQL {inputs.version}",
        f"memory {inputs.ram_mb} MB ({sources['ram']}), {inputs.cpus} CPUs ({sources['cpus']}),"
        f" {inputs.connections} connections ({sources['connections']}), /dev/shm"
        f" {inputs.shm_mb} MB",
        f"data {inputs.db_mb} MB ({sources['db_size']}), {inputs.disk_free_mb} MB free on the"
        f" data disk ({sources['disk_free']})",
        f"storage {inputs.storage}{' on ' + inputs.filesystem if inputs.filesystem else ''}:"
        f" random 8 kB read {inputs.read_us:.0f} µs, sequential"
        f" {inputs.seq_page_us:.1f} µs a page, {inputs.read_gain:.1f}x at queue depth 8"
        + (f", WAL flush {inputs.fsync_us:.0f} µs" if inputs.fsync_us else "")
        + f" ({sources['storage']})",
    ]


def render(
    fmt: str,
    profile: str,
    lines: list[str],
    inputs: Inputs,
    sources: dict[str, Any],
    accepted: tuple[Checked, ...],
    refused: tuple[Refused, ...],
) -> str:
    if fmt == "conf":
        return output.conf(lines, accepted, refused)
    if fmt == "sql":
        return output.sql(lines, accepted, refused)
    facts = {**inputs.names(), "sources": sources, "storage": inputs.storage}
    return output.as_json(output.document(facts, profile, accepted, refused))
