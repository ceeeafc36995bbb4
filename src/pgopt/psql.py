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
    try:
        result = subprocess.run(
            [*_args(binaries, variables), "-f", "-"],
            input=sql_text,
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            check=False,
        )
    except OSError as e:
        raise BinariesError(f"cannot run psql: {e}") from e
    if result.returncode != 0:
        errors = [ln for ln in result.stderr.splitlines() if "ERROR" in ln or "FATAL" in ln]
        detail = (errors or result.stderr.strip().splitlines() or ["psql failed"])[0]
        raise LabError(redactor(f"{what} failed: {detail.strip()}"))
    return result.stdout


def run_program(target: Target, program: str, args: list[str], *, what: str) -> None:
    """Run a client program (pg_dump, pg_restore) against the lab database."""
    target.binaries.require(program)
    env = target.client_env()
    try:
        result = subprocess.run(
            [str(target.binaries.path(program)), *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    except OSError as e:
        raise BinariesError(f"cannot run {program}: {e}") from e
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or [f"exit code {result.returncode}"])[0]
        raise LabError(redactor(f"{what} failed: {detail}"))


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
