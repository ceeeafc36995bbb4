"""Copy the user's database for an A/B: pg_dump of the source (or a dump file) as a
plain SQL script.

The script (no owners, no privileges: the copy belongs to pgopt's user) joins the
data's setup files, so every timed run rebuilds the same data from it. pg_dump
reads the source in one repeatable-read snapshot and writes nothing to it.
`--table` patterns narrow the copy to the tables a workload needs (pg_dump's
own pattern syntax; a table's indexes and constraints come with it); `--sample
PCT` copies a sample of the big tables' rows (ab/sample.py).

Column options that PostgreSQL does not define (a patched or extended source
server may carry its own, such as `pg_attver`) are left out of the copy, and
said: the server pgopt copies into would refuse them, and they hold no data.
"""

from __future__ import annotations

import os
import re
import tarfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..binaries import PgBinaries
from ..errors import UsageError
from ..psql import Psql
from ..redact import redact_dsn
from .sample import write_sampled

COLUMN_OPTIONS = frozenset({"n_distinct", "n_distinct_inherited"})  # ALTER COLUMN ... SET (...)
_SET_COLUMN_OPTIONS = re.compile(r"^(ALTER TABLE ONLY \S+ ALTER COLUMN \S+ SET )\((.*)\);$")


@dataclass(frozen=True)
class SourceCopy:
    script: Path
    left_out: dict[str, int]  # column options not copied, and how many columns had each
    sampled: dict[str, tuple[int, bool]] = field(default_factory=dict)  # table: rows, sampled


def dump_source(
    binaries: PgBinaries,
    dsn: str,
    tables: tuple[str, ...],
    into: Path,
    sample: float | None = None,
) -> SourceCopy:
    """Write the source database as `into`/source.sql, its big tables sampled to
    `sample` percent when given (ab/sample.py); an error (exit 2) with pg_dump's own
    reason when it cannot be read."""
    script = into / "source.sql"
    sections = ("pre-data", "post-data") if sample is not None else (None,)
    texts = []
    for section in sections:
        path = into / f"source-{section}.sql" if section else script
        _run(
            binaries,
            "pg_dump",
            [
                "--format=plain",
                "--no-owner",
                "--no-privileges",
                "--no-publications",
                "--no-subscriptions",
                *([f"--section={section}"] if section else []),
                f"--file={path}",
                *(f"--table={t}" for t in tables),
                f"--dbname={dsn}",
            ],
            what=f"copying {redact_dsn(dsn)}",
        )
        texts.append(path.read_text())
    if tables and not any(f"CREATE {kind}" in texts[0] for kind in ("TABLE", "SEQUENCE")):
        raise UsageError(f"--table {', '.join(tables)}: no table of the source matches")
    sampled = {}
    if sample is not None:
        sampled = write_sampled(texts[0], texts[1], dsn, sample, script)
    copy = _fit(script)
    return SourceCopy(copy.script, copy.left_out, sampled)


def script_of_dump(binaries: PgBinaries, dump: Path, into: Path) -> SourceCopy:
    """A dump file as a SQL script: pg_restore turns an archive (custom, tar or
    directory format) into one, without a server; a plain dump is a script already."""
    script = into / "source.sql"
    if dump.is_file() and dump.read_bytes()[:5] != b"PGDMP" and not tarfile.is_tarfile(dump):
        script.write_text(dump.read_text())
    else:
        _run(
            binaries,
            "pg_restore",
            ["--no-owner", "--no-privileges", f"--file={script}", str(dump)],
            what=f"reading the dump {dump}",
        )
    return _fit(script)


def _run(binaries: PgBinaries, program: str, args: list[str], *, what: str) -> None:
    """Run a client program away from any libpq variables of the caller's shell: the
    source is named on its command line (and its password redacted from errors)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    Psql(binaries, env).program(program, args, what=what)


def _fit(script: Path) -> SourceCopy:
    """The script without what the server it goes to would refuse, and what that was."""
    text, left_out = without_foreign_column_options(script.read_text())
    script.write_text(text)
    return SourceCopy(script, left_out)


def without_foreign_column_options(dump: str) -> tuple[str, dict[str, int]]:
    """The dump without column options PostgreSQL does not define, and what was left out."""
    left_out: Counter[str] = Counter()
    lines = []
    for line in dump.splitlines(keepends=True):
        match = _SET_COLUMN_OPTIONS.match(line.rstrip("\n"))
        if match is None:
            lines.append(line)
            continue
        options = [o.strip() for o in match.group(2).split(",")]
        kept = [o for o in options if o.split("=")[0].strip() in COLUMN_OPTIONS]
        left_out.update(o.split("=")[0].strip() for o in options if o not in kept)
        if kept:
            lines.append(f"{match.group(1)}({', '.join(kept)});\n")
    return "".join(lines), dict(left_out)
