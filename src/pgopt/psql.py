"""Run lab SQL through psql, with the lab's variables (`:users`); and pg_dump/pg_restore.

Lab SQL files are plain psql scripts, so a user can run them by hand with
`psql -v users=1000 -f load.sql`; pgopt runs them the same way.
"""

from __future__ import annotations

import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from . import machine, stopping
from .binaries import PgBinaries
from .errors import BinariesError, LabError
from .processes import CLIENT_ESCALATION, stop
from .redact import redactor

KEPT_LINES = 200  # of a long-running program's stderr, for its error


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

    def program_lines(
        self, program: str, args: list[str], *, what: str, line: Callable[[str], None]
    ) -> None:
        """Run a client program that tells its progress on stderr (pg_basebackup
        --progress): each line to `line` as it comes (a carriage return ends one too);
        a failure is one error, as program()'s. Interrupted, the program is stopped."""
        self.binaries.require(program)
        argv = [str(self.binaries.path(program)), *args]
        try:
            with stopping.held():  # a Ctrl-C waits until the child is held, to be stopped
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=self.env,
                )
        except OSError as e:
            raise BinariesError(f"cannot run {program}: {e}") from e
        kept: deque[str] = deque(maxlen=KEPT_LINES)
        try:
            assert proc.stderr is not None
            for text in proc.stderr:  # universal newlines: "\r" ends a line
                kept.append(text.rstrip("\n"))
                line(kept[-1])
            proc.wait()
        except BaseException:
            stop(proc, CLIENT_ESCALATION)
            raise
        finally:
            if proc.stderr is not None:
                proc.stderr.close()
        if proc.returncode != 0:
            _failed(what, kept, proc.returncode, None)

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
            _failed(what, result.stderr.strip().splitlines(), result.returncode, tolerated)
        return result.stdout


def _failed(what: str, stderr: Iterable[str], code: int, tolerated: str | None) -> None:
    """A client program's failure as one error (its first error line), its password
    redacted; nothing when every error line holds `tolerated`."""
    lines = [ln for ln in stderr if ln.strip()]
    errors = [ln for ln in lines if "ERROR" in ln or "FATAL" in ln or "error:" in ln]
    if tolerated and errors and all(tolerated in ln for ln in errors):
        return
    detail = (errors or lines or [f"exit code {code}"])[0]
    raise LabError(redactor(f"{what} failed: {detail.strip()}"))
