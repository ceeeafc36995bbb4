"""Run lab SQL through psql, with the lab's variables (`:users`); and pg_dump/pg_restore.

Lab SQL files are plain psql scripts, so a user can run them by hand with
`psql -v users=1000 -f load.sql`; pgopt runs them the same way.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from .binaries import PgBinaries
from .errors import BinariesError, LabError
from .redact import redactor
from .target.base import Target


def _args(binaries: PgBinaries, variables: Mapping[str, str]) -> list[str]:
    args = [str(binaries.path("psql")), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
    for name, value in sorted(variables.items()):
        args += ["-v", f"{name}={value}"]
    return args


def _run_client(
    args: list[str],
    env: dict[str, str],
    *,
    what: str,
    stdin: str | None = None,
    cwd: Path | None = None,
) -> str:
    """Run a client program; on failure raise LabError with its first error line."""
    try:
        result = subprocess.run(
            args, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=False
        )
    except OSError as e:
        raise BinariesError(f"cannot run {Path(args[0]).name}: {e}") from e
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        errors = [ln for ln in lines if "ERROR" in ln or "FATAL" in ln]
        detail = (errors or lines or [f"exit code {result.returncode}"])[0]
        raise LabError(redactor(f"{what} failed: {detail.strip()}"))
    return result.stdout


def run_sql(
    binaries: PgBinaries,
    env: dict[str, str],
    sql_text: str,
    variables: Mapping[str, str],
    *,
    what: str,
    cwd: Path | None = None,
) -> str:
    """Run `sql_text` (a psql script read from stdin); return its output.

    `what` names the SQL in errors (e.g. 'setup file load.sql').
    """
    args = [*_args(binaries, variables), "-f", "-"]
    return _run_client(args, env, what=what, stdin=sql_text, cwd=cwd)


def run_program(target: Target, program: str, args: list[str], *, what: str) -> None:
    """Run a client program (pg_dump, pg_restore) against the lab database."""
    target.binaries.require(program)
    _run_client([str(target.binaries.path(program)), *args], target.client_env(), what=what)


def run_sql_file(
    binaries: PgBinaries,
    env: dict[str, str],
    path: Path,
    variables: Mapping[str, str],
    *,
    what: str,
) -> str:
    return run_sql(
        binaries, env, path.read_text(), variables, what=f"{what} {path.name}", cwd=path.parent
    )


def timed_sql(
    binaries: PgBinaries,
    env: dict[str, str],
    sql_text: str,
    variables: Mapping[str, str],
    *,
    what: str,
    cwd: Path | None = None,
) -> float:
    """Run SQL and return its wall-clock seconds."""
    started = time.monotonic()
    run_sql(binaries, env, sql_text, variables, what=what, cwd=cwd)
    return time.monotonic() - started


def query_value(
    binaries: PgBinaries,
    env: dict[str, str],
    sql_text: str,
    variables: Mapping[str, str],
    *,
    what: str,
) -> str:
    """The single value the SQL returns (last non-empty output line)."""
    out = run_sql(binaries, env, sql_text, variables, what=what)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if not lines:
        raise LabError(f"{what} returned no row")
    return lines[-1].strip()
