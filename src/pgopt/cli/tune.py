"""`pgopt tune`: a configuration for this machine, each value with its reason, held
to the target server's own bounds; `--measure` puts it to the test (tune/measure.py).
A server of `--dsn` is tuned for this machine's memory, CPUs and disk only when it is
on this machine (tune/locality.py); otherwise `--ram` and `--cpus` must say its own,
and without them tune refuses before it connects."""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import click

from ..binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from ..consoles import err, out, say_written
from ..errors import UsageError
from ..machine import read_facts
from ..params import parse_size
from ..running.options import RunOptions
from ..servers.binary_facts import embedded_facts
from ..servers.embedded import default_workdir_base
from ..store import new_run_dir, write_atomic
from ..tune import output, server
from ..tune.facts import ServerSettings, Storage, platform_of
from ..tune.inputs import Given, Place, assemble
from ..tune.locality import Locality, confirm, data_disk, of_dsn, refusal
from ..tune.measure import MeasureOptions, measure
from ..tune.measure_lab import WORKLOADS
from ..tune.profile import DB_TYPES, STORAGE, Inputs, derive, profiles
from ..tune.safety import memory_check
from ..tune.settings_check import Checked, Refused, check
from ..tune.storage import probe
from ..words import plural
from .running import run_options


@click.command("tune")
@click.option("--ram", help="Model a machine with this much memory (e.g. 16GB).")
@click.option("--cpus", type=click.IntRange(min=1), help="Model a machine with N CPUs.")
@click.option("--storage", type=click.Choice(STORAGE), help="Model this storage, not probe it.")
@click.option("--connections", type=click.IntRange(min=1), help="max_connections to plan for.")
@click.option(
    "--db-size",
    help="The data's size (default: the server's databases; pgtune's profile on a throwaway "
    "server: pgtune's own default, 1x to 3x RAM).",
)
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
    RunOptions.of(options).checked()
    given = given_of(options)  # bad input fails here, before any server starts
    where = locality_of(options)  # and a server not here without --ram/--cpus
    if options["dry_run"]:
        dry_run(options, given, where)
        return
    target = read_server(options)
    if where is not None:
        where = confirmed(where, target, options)
    inputs_of = partial(tune_inputs, options, where=where)
    if options["measure"]:
        measure(measure_options(options), given, target, inputs_of)
        return
    inputs, sources = inputs_of(given, target)
    profile = profiles()[options["profile_name"]]
    accepted, refused = check(derive(profile, inputs), target.pg_settings)
    settings = {c.name: c.value for c in accepted}
    connections = int(settings.get("max_connections", inputs.connections))
    memory = memory_check(settings, target.pg_settings, connections, inputs.ram_mb * 2**20)
    planned = (connections, _connections_source(accepted, inputs, sources))
    lines = [*header(options["profile_name"], inputs, sources, planned), memory.describe()]
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
    if options["fmt"] == "sql" and options["dsn"] and target.rights is not None:
        why = target.rights.refused_alter_system(c.name for c in accepted)
        if why:
            note = f"[tune] note: the script is not for the role of --dsn: {why}"
            err.print(note, markup=False, soft_wrap=True)


PROBE_SECONDS = 8  # the disk probe as measured here: pg_test_fsync, then the reads
READ_SECONDS = 3  # initdb, start, read pg_settings, stop a throwaway server
PROBE = "pg_test_fsync, random and sequential reads"


def dry_run(options: dict[str, Any], given: Given, where: Locality | None) -> None:
    """What `tune` would do, and for how long, starting nothing: no server, no probe.
    With --measure, the plans of its labs from the profiles as derived for this machine
    (not yet held to the server's bounds, which only a server can tell)."""
    binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    if where is None:
        read = (
            f"start a throwaway PostgreSQL {binaries.version}, read its pg_settings and "
            f"remove it (about {READ_SECONDS} s)"
        )
    else:
        side = "on" if where.local else "not on"
        read = (
            f"read the settings of the server of --dsn in a read-only session (it is {side}"
            f" this machine: {where.why})"
        )
    if options["storage"]:
        disk = "take the storage as --storage gives it"
    elif where is None:
        disk = (
            f"probe the disk in {default_workdir_base()} ({PROBE}: about {PROBE_SECONDS} s;"
            " --storage skips it)"
        )
    elif where.local:
        disk = (
            f"probe the disk of its data directory if it is visible here ({PROBE}: about "
            f"{PROBE_SECONDS} s; --storage skips it)"
        )
    else:
        disk = "assume ssd storage (--storage gives it)"
    out.print(f"pgopt tune would {read}, {disk}, then derive the profile.", highlight=False)
    if not options["measure"]:
        out.print("A dry run starts nothing and measures nothing.", highlight=False)
        return

    def derived_inputs(given: Given, target: ServerSettings) -> tuple[Inputs, dict[str, Any]]:
        place = Place("none read (a dry run)", unmeasured="a dry run")
        return assemble(given, read_facts(), None, target, place)

    if options["dsn"]:  # its settings, read-only, decide what the profiles hold there
        measure(measure_options(options), given, read_server(options), derived_inputs)
        return
    facts = embedded_facts(binaries)
    target = ServerSettings(facts.version_num, 100, 0, {}, platform_of(sys.platform))
    measure(measure_options(options), given, target, derived_inputs, contexts=facts.contexts)


def measure_options(options: dict[str, Any]) -> MeasureOptions:
    """--measure's options, typed."""
    return MeasureOptions(
        RunOptions.of(options),
        options["workload"],
        options["pgtune_type"],
        bool(options["db_size"]),
        options["ablation"],
        options["ablate_from"],
    )


def read_server(options: dict[str, Any]) -> ServerSettings:
    """The target server's settings: --dsn's, or a throwaway embedded server's."""
    if options["dsn"]:
        return server.from_dsn(options["dsn"])
    err.print(
        f"[tune] reading the settings of a throwaway server (initdb, start, read, stop): "
        f"about {READ_SECONDS} s",
        markup=False,
    )
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


def locality_of(options: dict[str, Any]) -> Locality | None:
    """Where the server of --dsn is, from the DSN alone (None: no --dsn); one not on this
    machine without --ram and --cpus is refused here, before any connection."""
    if not options["dsn"]:
        return None
    where = of_dsn(options["dsn"])
    why = refusal(where, bool(options["ram"]), bool(options["cpus"]))
    if why:
        raise UsageError(why)
    return where


def confirmed(where: Locality, target: ServerSettings, options: dict[str, Any]) -> Locality:
    """The locality checked against the server's data directory, now it is read: a local
    address whose data directory is not here is another machine's (a container, a
    tunnel), refused without --ram and --cpus."""
    data_directory = _data_directory(target)
    visible = data_directory is not None and Path(data_directory).is_dir()
    checked = confirm(where, data_directory, visible)
    why = refusal(checked, bool(options["ram"]), bool(options["cpus"]))
    if why:
        raise UsageError(why)
    return checked


def _data_directory(target: ServerSettings) -> str | None:
    row = target.pg_settings.get("data_directory")
    return str(row["setting"]) if row and row.get("setting") else None


def tune_inputs(
    options: dict[str, Any], given: Given, target: ServerSettings, where: Locality | None
) -> tuple[Inputs, dict[str, Any]]:
    """The inputs for the server read: the throwaway one (where is None), here, its disk
    probed; or --dsn's, with this machine's figures only when it is on this machine."""
    if where is None:
        storage = None if options["storage"] else _probe(options, default_workdir_base())
        return assemble(given, read_facts(), storage, target)
    side = "on" if where.local else "not on"
    place = Place(f"--dsn, {side} this machine ({where.why})", users=True, here=where.local)
    storage = None
    data_directory = _data_directory(target)
    if where.local and not options["storage"]:
        folder, why_not = (
            data_disk(data_directory, [default_workdir_base()])
            if data_directory
            else (None, "its data directory is hidden from this role")
        )
        if folder is None:
            place = replace(place, unmeasured=why_not)
        else:
            storage = _probe(options, folder)
            place = replace(place, measured=f"the disk of its data directory {data_directory}")
    return assemble(given, read_facts(), storage, target, place)


def _probe(options: dict[str, Any], folder: Path) -> Storage:
    err.print(
        f"[tune] probing the disk in {folder} ({PROBE}): about {PROBE_SECONDS} s; "
        "--storage ssd|nvme|hdd skips it",
        markup=False,
    )
    binaries = find_binaries(options["pg_bin"], need=CLIENT_PROGRAMS)
    fsync = binaries.path("pg_test_fsync") if binaries.has("pg_test_fsync") else None
    return probe(folder, fsync)


def _connections_source(
    accepted: tuple[Checked, ...], inputs: Inputs, sources: dict[str, Any]
) -> str:
    """Where the connections planned for came from: the profile's own max_connections
    where it sets one of its own (pgtune's default for the type), else the inputs'."""
    for c in accepted:
        if c.name == "max_connections" and int(c.value) != inputs.connections:
            return c.reason
    return str(sources["connections"])


def header(
    profile: str, inputs: Inputs, sources: dict[str, Any], connections: tuple[int, str]
) -> list[str]:
    return [
        f"pgopt tune: the {profile} profile for PostgreSQL {inputs.version} on {inputs.platform}"
        f", the server: {sources['server']}",
        f"memory {inputs.ram_mb} MB ({sources['ram']}), {inputs.cpus} CPUs ({sources['cpus']}),"
        f" {connections[0]} connections ({connections[1]}), /dev/shm {inputs.shm_mb} MB",
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
