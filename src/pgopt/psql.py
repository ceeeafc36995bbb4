"""Run lab SQL through psql, with the lab's variables (`:users`); and pg_dump/pg_restore.

Lab SQL files are plain psql scripts, so a user can run them by hand with
`psql -v users=1000 -f load.sql`; pgopt runs them the same way.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from . import machine
from .binaries import PgBinaries
from .errors import BinariesError, LabError
from .redact import redactor


class Psql:
    """psql and the other client programs, bound to one server's lab database.

    `env` carries the connection (libpq variables, password included); `what`
    names the SQL in errors, e.g. 'setup file load.sql failed: ERROR: ...'.
    """

    def __init__(self, binaries: PgBinaries, env: dict[str, str]) -> None:
        self.binaries = binaries
        self.env = env

    def run(
        self, sql_text: str, variables: Mapping[str, str], *, what: str, cwd: Path | None = None
    ) -> str:
        """Run `sql_text` as a psql script read from stdin; return its output."""
        return self._client([*self._psql(variables), "-f", "-"], what=what, stdin=sql_text, cwd=cwd)

    def run_file(self, path: Path, variables: Mapping[str, str], *, what: str) -> str:
        """Run a script file, read by psql itself (a copy of a database may be gigabytes)
        in its own folder, so `\\i` and relative paths work."""
        return self._client(
            [*self._psql(variables), "-f", str(path.resolve())],
            what=f"{what} {path.name}",
            cwd=path.parent,
        )

    def _psql(self, variables: Mapping[str, str]) -> list[str]:
        args = [str(self.binaries.path("psql")), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
        for name, value in sorted(variables.items()):
            args += ["-v", f"{name}={value}"]
        return args

    def timed(
        self, sql_text: str, variables: Mapping[str, str], *, what: str, cwd: Path | None = None
    ) -> float:
        """Run SQL and return its wall-clock seconds."""
        started = time.monotonic()
        self.run(sql_text, variables, what=what, cwd=cwd)
        return time.monotonic() - started

    def value(self, sql_text: str, variables: Mapping[str, str], *, what: str) -> str:
        """The single value the SQL returns (its last non-empty output line)."""
        lines = [ln for ln in self.run(sql_text, variables, what=what).splitlines() if ln.strip()]
        if not lines:
            raise LabError(f"{what} returned no row")
        return lines[-1].strip()

    def program(
        self, program: str, args: list[str], *, what: str, tolerated: str | None = None
    ) -> str:
        """Run a client program (pg_dump, pg_restore) against the lab database; what it
        printed.

        With `tolerated`, a failure whose every error line contains that text counts
        as success (pg_restore goes on past errors unless told --exit-on-error).
        """
        self.binaries.require(program)
        args = [str(self.binaries.path(program)), *args]
        return self._client(args, what=what, tolerated=tolerated)

    def restore(self, archive: Path) -> None:
        """A pg_dump archive in directory format restored into the lab database with
        `pg_restore -j`, as many jobs as cores: tables loaded and indexes built side
        by side."""
        self.program(
            "pg_restore",
            [
                "--no-owner",
                "--no-privileges",
                "--exit-on-error",
                f"--jobs={machine.cpu_count()}",
                f"--dbname={self.env['PGDATABASE']}",
                str(archive),
            ],
            what=f"restoring {archive.name}",
        )

    def _client(
        self,
        args: list[str],
        *,
        what: str,
        stdin: str | None = None,
        cwd: Path | None = None,
        tolerated: str | None = None,
    ) -> str:
        try:
            result = subprocess.run(
                args,
                input=stdin,
                capture_output=True,
                text=True,
                env=self.env,
                cwd=cwd,
                check=False,
            )
        except OSError as e:
            raise BinariesError(f"cannot run {Path(args[0]).name}: {e}") from e
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            errors = [ln for ln in lines if "ERROR" in ln or "FATAL" in ln or "error:" in ln]
            if tolerated and errors and all(tolerated in ln for ln in errors):
                return result.stdout
            detail = (errors or lines or [f"exit code {result.returncode}"])[0]
            raise LabError(redactor(f"{what} failed: {detail.strip()}"))
        return result.stdout
