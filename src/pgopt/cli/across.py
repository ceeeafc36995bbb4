"""`--a-pg-bin DIR --b-pg-bin DIR`: a lab, or `pgopt ab`, across two PostgreSQL
installations, each a throwaway server of its own (lab/across.py places the steps,
engine/servers.py runs them). Checked before any server starts: each folder holds
the programs, the settings each side is given exist in its version, no --dsn.

The user's data reaches both sides as an upgrade carries it: dumped by the older
version's pg_dump, which the newer version's restore reads (pg_dump's own rule: a
newer pg_restore reads an older dump, never the other way round). Each side
restores with its own programs. A source, or a dump, newer than the older side is
refused before anything is copied: its SQL is not the older version's."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import psycopg

from ..ab.source import archive_writer, is_plain
from ..binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, PgBinaries, find_binaries
from ..errors import UsageError, first_line
from ..lab.across import Side
from ..redact import redact_dsn
from ..servers.binary_facts import embedded_facts
from ..servers.embedded import EmbeddedTarget
from .app import err

F = TypeVar("F", bound=Callable[..., Any])

ACROSS_OPTIONS = (
    click.option(
        "--a-pg-bin",
        metavar="DIR",
        help="Across versions: A (each step's first side) on a throwaway server of the "
        "PostgreSQL programs in DIR (default: --pg-bin's).",
    ),
    click.option(
        "--b-pg-bin",
        metavar="DIR",
        help="Across versions: B (each step's second side) on a server of these programs.",
    ),
)


def across_options(command: F) -> F:
    for option in reversed(ACROSS_OPTIONS):
        command = option(command)
    return command


Pair = tuple[tuple[Side, PgBinaries], tuple[Side, PgBinaries]]


def sides_of(options: dict[str, Any]) -> Pair | None:
    """The two sides the options ask for, or None when they ask for one server (found
    once: kept in `options`)."""
    if "across_pair" in options:
        return options["across_pair"]  # type: ignore[no-any-return]
    folders = options.get("a_pg_bin"), options.get("b_pg_bin")
    if not any(folders):
        return None
    if options["dsn"]:
        raise UsageError("--a-pg-bin and --b-pg-bin start a throwaway server each: not with --dsn")
    found = []
    for name, folder in zip(("a", "b"), folders, strict=True):
        binaries = _binaries(f"--{name}-pg-bin", folder, options["pg_bin"])
        known = frozenset(k.lower() for k in embedded_facts(binaries).contexts)
        found.append((Side(name, binaries.version, known), binaries))
    (a, a_bin), (b, b_bin) = found
    if a_bin.bindir.resolve() == b_bin.bindir.resolve():
        err.print(
            f"pgopt: note: both sides run {a_bin.bindir} (PostgreSQL {a.version}): an A/A "
            "across two servers, whose verdict should be no change",
            highlight=False,
        )
    options["across_pair"] = (a, a_bin), (b, b_bin)
    return (a, a_bin), (b, b_bin)


def _binaries(flag: str, folder: str | None, default: str | None) -> PgBinaries:
    need = CLIENT_PROGRAMS + SERVER_PROGRAMS
    if folder is None:
        return find_binaries(default, need=need)
    missing = [p for p in need if not os.access(Path(folder) / p, os.X_OK)]
    if missing:
        raise UsageError(f"{flag} {folder}: no {', '.join(missing)} there")
    return find_binaries(folder, need=need)


def servers_of(
    pair: Pair, options: dict[str, Any], say: Callable[[str], None]
) -> dict[str, EmbeddedTarget]:
    """A throwaway server for each side (started by the session)."""
    workdir = options["workdir"]
    if workdir is not None and not workdir.is_dir():
        raise UsageError(f"--workdir {workdir} is not a folder")
    return {
        side.name: EmbeddedTarget(binaries, workdir=workdir, keep=options["keep"], say=say)
        for side, binaries in pair
    }


def _by_age(options: dict[str, Any]) -> list[tuple[str, PgBinaries]]:
    """The two sides' names and programs, the older version first."""
    pair = sides_of(options)
    assert pair is not None, "only across servers"
    return sorted(((side.name, binaries) for side, binaries in pair), key=lambda f: f[1].major)


def copy_binaries(
    options: dict[str, Any], source_dsn: str | None, dump: Path | None = None
) -> PgBinaries | None:
    """Across servers, the programs that copy the user's data: the older side's, whose
    pg_dump must be able to read the source, and whose pg_restore an archive (a newer
    pg_restore would write SQL the older version does not know; a plain dump is
    judged by check_dump_script). None: not across servers, the usual programs."""
    if sides_of(options) is None:
        return None
    (name, binaries), (_, newest) = _by_age(options)
    if source_dsn is None:
        if dump is not None and not is_plain(dump):
            _refuse_newer(archive_writer(newest, dump), name, binaries)
        return binaries
    major = _source_major(source_dsn)
    if major > binaries.major:
        raise UsageError(
            f"the source is PostgreSQL {major}: side {name}'s PostgreSQL "
            f"{binaries.version} cannot take its dump (pg_dump {binaries.major} refuses a "
            "newer server, and a newer pg_dump writes SQL it does not know)"
        )
    return binaries


def check_dump_script(options: dict[str, Any], script: Path) -> None:
    """Across servers, a plain dump written by a newer pg_dump than the older side's is
    refused: its SQL is not that version's (`SET transaction_timeout`, from 17)."""
    if sides_of(options) is None:
        return
    name, binaries = _by_age(options)[0]
    with script.open(errors="replace") as f:
        head = [next(f, "") for _ in range(30)]
    for line in head:
        if line.startswith("-- Dumped by pg_dump version "):
            _refuse_newer(line.removeprefix("-- Dumped by pg_dump version "), name, binaries)


def _refuse_newer(version: str | None, name: str, binaries: PgBinaries) -> None:
    if version is not None and int(version.split(".")[0]) > binaries.major:
        raise UsageError(
            f"the dump was written by pg_dump {version.split()[0]}: side {name}'s PostgreSQL "
            f"{binaries.version} cannot restore it; dump with pg_dump {binaries.major} "
            "(its SQL is what both versions read)"
        )


def _source_major(dsn: str) -> int:
    try:
        with psycopg.connect(dsn, connect_timeout=10) as conn:
            return int(conn.info.server_version) // 10000
    except psycopg.Error as e:
        raise UsageError(f"copying {redact_dsn(dsn)}: {first_line(e)}") from e
