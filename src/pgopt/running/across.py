"""`--a-pg-bin DIR --b-pg-bin DIR`: a lab, or `pgopt ab`, across two PostgreSQL
installations, each a throwaway server of its own (lab/across.py places the steps,
engine/server_pair.py runs them). Checked before any server starts: each folder holds
the programs, no --dsn; the settings each side is given are checked against its
version by lab/across.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, PgBinaries, find_binaries
from ..consoles import err
from ..errors import UsageError
from ..lab.across import Side
from ..servers.binary_facts import embedded_facts
from ..servers.embedded import EmbeddedTarget

Pair = tuple[tuple[Side, PgBinaries], tuple[Side, PgBinaries]]


def find_sides(
    a_pg_bin: str | None, b_pg_bin: str | None, pg_bin: str | None, dsn: str | None
) -> Pair | None:
    """The two sides `--a-pg-bin` and `--b-pg-bin` ask for (either defaults to
    `pg_bin`'s programs), or None when they ask for one server."""
    folders = a_pg_bin, b_pg_bin
    if not any(folders):
        return None
    if dsn:
        raise UsageError("--a-pg-bin and --b-pg-bin start a throwaway server each: not with --dsn")
    found = []
    for name, folder in zip(("a", "b"), folders, strict=True):
        binaries = _binaries(f"--{name}-pg-bin", folder, pg_bin)
        known = frozenset(k.lower() for k in embedded_facts(binaries).contexts)
        found.append((Side(name, binaries.version, known), binaries))
    (a, a_bin), (b, b_bin) = found
    if a_bin.bindir.resolve() == b_bin.bindir.resolve():
        err.print(
            f"pgopt: note: both sides run {a_bin.bindir} (PostgreSQL {a.version}): an A/A "
            "across two servers, whose verdict should be no change",
            highlight=False,
        )
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
    pair: Pair, workdir: Path | None, keep: bool, say: Callable[[str], None]
) -> dict[str, EmbeddedTarget]:
    """A throwaway server for each side (started by the session)."""
    if workdir is not None and not workdir.is_dir():
        raise UsageError(f"--workdir {workdir} is not a folder")
    return {
        side.name: EmbeddedTarget(binaries, workdir=workdir, keep=keep, say=say)
        for side, binaries in pair
    }


def by_age(pair: Pair) -> list[tuple[str, PgBinaries]]:
    """The two sides' names and programs, the older version first."""
    return sorted(((side.name, binaries) for side, binaries in pair), key=lambda f: f[1].major)
