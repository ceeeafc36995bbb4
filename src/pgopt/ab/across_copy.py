"""Which programs copy the user's data when an A/B runs across two PostgreSQL versions
(running/across.py finds the sides).

The data reaches both sides as an upgrade carries it: dumped by the older version's
pg_dump, which the newer version's restore reads (pg_dump's own rule: a newer
pg_restore reads an older dump, never the other way round). Each side restores with
its own programs. A source, or a dump, newer than the older side is refused before
anything is copied: its SQL is not the older version's."""

from __future__ import annotations

from pathlib import Path

import psycopg

from ..binaries import PgBinaries
from ..errors import UsageError, first_line
from ..redact import redact_dsn
from ..running.across import Pair, by_age
from ..servers import read_only
from .source import archive_writer, is_plain


def copy_binaries(
    sides: Pair | None, source_dsn: str | None, dump: Path | None = None
) -> PgBinaries | None:
    """Across servers, the programs that copy the user's data: the older side's, whose
    pg_dump must be able to read the source, and whose pg_restore an archive (a newer
    pg_restore would write SQL the older version does not know; a plain dump is
    judged by check_dump_script). None: not across servers, the usual programs."""
    if sides is None:
        return None
    (name, binaries), (_, newest) = by_age(sides)
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


def check_dump_script(sides: Pair | None, script: Path) -> None:
    """Across servers, a plain dump written by a newer pg_dump than the older side's is
    refused: its SQL is not that version's (`SET transaction_timeout`, from 17)."""
    if sides is None:
        return
    name, binaries = by_age(sides)[0]
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
        with read_only.connect(dsn, "ab") as conn:
            return int(conn.info.server_version) // 10000
    except psycopg.Error as e:
        raise UsageError(f"copying {redact_dsn(dsn)}: {first_line(e)}") from e
