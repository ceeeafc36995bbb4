"""Copy the user's database for an A/B: pg_dump of the source (or a dump file), as the
first of the data's setup files, restored once into the A/B's templates.

From a source, in two parts read in one snapshot (exported by a read-only session
of pgopt's and given to both pg_dumps): the schema as a plain SQL script (so
what the server pgopt copies into would refuse can be left out, below), then the
rows, indexes and constraints as a directory-format archive written by pg_dump in
one job (a session reading a table at a time: a production server gives the copy
one core and one scan, never one a core of pgopt's machine) and restored here by
`pg_restore --jobs`, a table per job. No owners, no privileges: the copy belongs
to pgopt's user. pg_dump writes nothing to the source, and has no rate limit.
`--table` patterns narrow the copy to the tables a workload needs (pg_dump's
own pattern syntax; a table's indexes and constraints come with it), with what
PostgreSQL needs beside them (ab/relations.py: a partitioned table's partitions,
a view's tables, ...; what cannot be copied left out, and said); `--sample PCT`
copies a sample of the big tables' rows (ab/sample.py).

Column options that PostgreSQL does not define (a patched or extended source
server may carry its own, such as `pg_attver`) are left out of the copy, and
said: the server pgopt copies into would refuse them, and they hold no data.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from ..binaries import PgBinaries
from ..errors import UsageError, first_line
from ..psql import Psql
from ..redact import redact_dsn
from ..servers import read_only
from ..servers.dsn import for_client
from ..sqltree import WRITTEN_NAME, WRITTEN_QUALIFIED
from .relations import CopyList, copy_list, read_relations
from .sample import write_sampled

COLUMN_OPTIONS = frozenset({"n_distinct", "n_distinct_inherited"})  # ALTER COLUMN ... SET (...)
_SET_COLUMN_OPTIONS = re.compile(
    rf"^(ALTER TABLE ONLY {WRITTEN_QUALIFIED} ALTER COLUMN {WRITTEN_NAME} SET )\((.*)\);$"
)


@dataclass(frozen=True)
class SourceCopy:
    setup: tuple[Path, ...]  # the copy as setup files: SQL scripts, an archive folder
    left_out: dict[str, int]  # column options not copied, and how many columns had each
    sampled: dict[str, tuple[int, bool]] = field(default_factory=dict)  # table: rows, sampled
    relations_left_out: dict[str, str] = field(default_factory=dict)  # relation: why


def dump_source(
    binaries: PgBinaries,
    dsn: str,
    tables: tuple[str, ...],
    into: Path,
    sample: float | None = None,
) -> SourceCopy:
    """The source database copied into `into`, its big tables sampled to `sample`
    percent when given (ab/sample.py); an error (exit 2) with pg_dump's own reason
    when it cannot be read."""
    if sample is not None:
        return _sampled(binaries, dsn, tables, into, sample)
    schema, rows = into / "source-schema.sql", into / "source-data"
    with exported_snapshot(dsn) as (snapshot, conn):
        listed = _copy_list(conn, tables)
        names = listed.tables
        _pg_dump(binaries, dsn, names, ["--format=plain", "--section=pre-data"], schema, snapshot)
        _pg_dump(
            binaries,
            dsn,
            names,
            [
                "--format=directory",  # one job: see above
                "--compress=0",  # read once, soon; the CPU is the workload's
                "--section=data",
                "--section=post-data",
            ],
            rows,
            snapshot,
        )
    text = schema.read_text()
    _check_tables(tables, text)
    schema.write_text(listed.schemas_sql() + text)
    fitted = _fit(schema)
    return SourceCopy((schema, rows), fitted.left_out, relations_left_out=listed.left_out)


@contextmanager
def exported_snapshot(dsn: str) -> Iterator[tuple[str, psycopg.Connection[Any]]]:
    """A snapshot of the source that both pg_dumps read, held by a read-only session
    of pgopt's until they are done (servers/read_only.py's, without its statement
    timeout: the transaction stays open as long as the dumps take); and that session,
    in it."""
    try:
        with read_only.connect(dsn, "ab", autocommit=False, copying=True) as conn:
            conn.execute("begin isolation level repeatable read read only")
            row = conn.execute("select pg_export_snapshot()").fetchone()
            assert row is not None
            yield str(row[0]), conn
            conn.rollback()
    except psycopg.Error as e:
        raise UsageError(f"copying {redact_dsn(dsn)}: {first_line(e)}") from e


def _copy_list(conn: psycopg.Connection[Any], tables: tuple[str, ...]) -> CopyList:
    """What `--table` copies: the whole database without one; else the relations and
    what they need (ab/relations.py), an error when every one is left out."""
    if not tables:
        return CopyList(())
    listed = copy_list(tables, read_relations(conn, tables))
    if not listed.tables:
        reasons = "; ".join(f"{name}: {why}" for name, why in listed.left_out.items())
        raise UsageError(f"--table {', '.join(tables)}: nothing can be copied ({reasons})")
    return listed


def _sampled(
    binaries: PgBinaries, dsn: str, tables: tuple[str, ...], into: Path, sample: float
) -> SourceCopy:
    try:
        with read_only.connect(dsn, "ab") as conn:
            listed = _copy_list(conn, tables)
    except psycopg.Error as e:
        raise UsageError(f"copying {redact_dsn(dsn)}: {first_line(e)}") from e
    texts = []
    for section in ("pre-data", "post-data"):
        path = into / f"source-{section}.sql"
        args = ["--format=plain", f"--section={section}"]
        _pg_dump(binaries, dsn, listed.tables, args, path, None)
        texts.append(path.read_text())
    _check_tables(tables, texts[0])
    script = into / "source.sql"
    sampled = write_sampled(listed.schemas_sql() + texts[0], texts[1], dsn, sample, script)
    copy = _fit(script)
    return SourceCopy(copy.setup, copy.left_out, sampled, listed.left_out)


def _pg_dump(
    binaries: PgBinaries,
    dsn: str,
    tables: tuple[str, ...],
    args: list[str],
    path: Path,
    snapshot: str | None,
) -> None:
    _run(
        binaries,
        "pg_dump",
        [
            "--no-owner",
            "--no-privileges",
            "--no-publications",
            "--no-subscriptions",
            *args,
            *([f"--snapshot={snapshot}"] if snapshot else []),
            f"--file={path}",
            *(f"--table={t}" for t in tables),
        ],
        what=f"copying {redact_dsn(dsn)}",
        dsn=dsn,
    )


# what pg_dump writes for a relation --table matches
_RELATIONS = ("TABLE", "UNLOGGED TABLE", "SEQUENCE", "VIEW", "MATERIALIZED VIEW")


def _check_tables(tables: tuple[str, ...], schema: str) -> None:
    if tables and not any(f"CREATE {kind} " in schema for kind in _RELATIONS):
        raise UsageError(f"--table {', '.join(tables)}: no table of the source matches")


def script_of_dump(binaries: PgBinaries, dump: Path, into: Path) -> SourceCopy:
    """A dump file as a SQL script: pg_restore turns an archive (custom, tar or
    directory format) into one, without a server; a plain dump is a script already."""
    script = into / "source.sql"
    if is_plain(dump):
        shutil.copyfile(dump, script)
    else:
        _run(
            binaries,
            "pg_restore",
            ["--no-owner", "--no-privileges", f"--file={script}", str(dump)],
            what=f"reading the dump {dump}",
        )
    return _fit(script)


def is_plain(dump: Path) -> bool:
    """A plain SQL dump (a script already), not an archive pg_restore reads."""
    return dump.is_file() and _head(dump) != b"PGDMP" and not tarfile.is_tarfile(dump)


def archive_writer(binaries: PgBinaries, dump: Path) -> str | None:
    """The version of the pg_dump that wrote an archive, from its table of contents
    (`binaries`' pg_restore must be as new as that pg_dump); None if it does not say."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    args = ["--list", str(dump)]
    listing = Psql(binaries, env).program("pg_restore", args, what=f"reading the dump {dump}")
    for line in listing.splitlines():
        if "Dumped by pg_dump version:" in line:
            return line.split("Dumped by pg_dump version:")[1].split()[0]
    return None


def _head(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(5)


def _run(
    binaries: PgBinaries, program: str, args: list[str], *, what: str, dsn: str | None = None
) -> None:
    """Run a client program away from any libpq variables of the caller's shell: the
    source, where it reads one, named on its command line without its password
    (servers/dsn.py: that goes in its environment)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if dsn is not None:
        conninfo, env = for_client(dsn)
        args = [*args, f"--dbname={conninfo}"]
    Psql(binaries, env).program(program, args, what=what)


def _fit(script: Path) -> SourceCopy:
    """The script without what the server it goes to would refuse, and what that was;
    read and written line by line (a plain dump may be gigabytes)."""
    left_out: Counter[str] = Counter()
    fitted = script.with_suffix(".fitted")
    with script.open() as dump, fitted.open("w") as out:
        out.writelines(fitted_lines(dump, left_out))
    fitted.replace(script)
    return SourceCopy((script,), dict(left_out))


def without_foreign_column_options(dump: str) -> tuple[str, dict[str, int]]:
    """The dump without column options PostgreSQL does not define, and what was left out."""
    left_out: Counter[str] = Counter()
    text = "".join(fitted_lines(dump.splitlines(keepends=True), left_out))
    return text, dict(left_out)


def fitted_lines(lines: Iterable[str], left_out: Counter[str]) -> Iterator[str]:
    """Each line of a dump, its column options PostgreSQL does not define left out
    (and counted in `left_out`)."""
    for line in lines:
        match = _SET_COLUMN_OPTIONS.match(line.rstrip("\n"))
        if match is None:
            yield line
            continue
        options = [o.strip() for o in match.group(2).split(",")]
        kept = [o for o in options if o.split("=")[0].strip() in COLUMN_OPTIONS]
        left_out.update(o.split("=")[0].strip() for o in options if o not in kept)
        if kept:
            yield f"{match.group(1)}({', '.join(kept)});\n"
