"""How big the copy of the user's database will be, read before anything is copied:
for the disk-space check and for `--dry-run`'s estimate.

The sizes come from a read-only session on the source: each table's heap (with
its TOAST) and its total with indexes, for the tables `--table` names (pg_dump's
patterns) or all of them, sampled tables counted at `--sample` percent. On disk an
A/B needs at most the dump (about the tables' heaps: COPY text), two templates
(A's and B's: the whole copy each, B's index on top) and the clone a writing
workload's run starts from.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg

from ..errors import UsageError, first_line
from ..redact import redact_dsn
from ..report.fmt import format_bytes
from ..servers import read_only
from .sample import SAMPLE_FROM_BYTES

TABLES_SQL = """\
select n.nspname, c.relname,
       pg_relation_size(c.oid) + coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),
       pg_total_relation_size(c.oid)
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where c.relkind in ('r', 'm')
  and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_toast'
"""
COPIES_ON_DISK = 3  # two templates and a clone
SAMPLES_TRIED = (50.0, 25.0, 10.0, 5.0, 1.0)


@dataclass(frozen=True)
class TableSize:
    schema: str
    name: str
    heap_bytes: int  # rows, with their TOAST: about what the dump writes
    total_bytes: int  # with its indexes: what a restored copy holds


@dataclass(frozen=True)
class CopySize:
    dump_bytes: int
    database_bytes: int

    @property
    def local_bytes(self) -> int:
        """On the disk of an embedded server: the dump, two templates and a clone."""
        return self.dump_bytes + COPIES_ON_DISK * self.database_bytes


def read_tables(dsn: str) -> list[TableSize]:
    try:
        with read_only.connect(dsn, "ab", autocommit=False) as conn:
            rows = conn.execute(TABLES_SQL).fetchall()
    except psycopg.Error as e:
        raise UsageError(f"copying {redact_dsn(dsn)}: {first_line(e)}") from e
    return [TableSize(str(s), str(n), int(h), int(t)) for s, n, h, t in rows]


def copy_size(
    tables: Sequence[TableSize], patterns: Sequence[str], sample: float | None
) -> CopySize:
    """The copy's size: the tables `patterns` name (all without any), the big ones at
    `sample` percent."""
    chosen = [t for t in tables if not patterns or any(matches(p, t) for p in patterns)]
    dump = database = 0.0
    for t in chosen:
        share = sample / 100 if sample is not None and t.heap_bytes >= SAMPLE_FROM_BYTES else 1.0
        dump += t.heap_bytes * share
        database += t.total_bytes * share
    return CopySize(round(dump), round(database))


def matches(pattern: str, table: TableSize) -> bool:
    """pg_dump's `--table` pattern: `*` and `?` as in a shell, `schema.table` or a
    table in any schema, unquoted names in lower case."""
    schema, _, name = pattern.rpartition(".")
    if schema and not _pattern(schema).fullmatch(table.schema):
        return False
    return _pattern(name).fullmatch(table.name) is not None


def _pattern(text: str) -> re.Pattern[str]:
    if text.startswith('"') and text.endswith('"'):
        return re.compile(re.escape(text[1:-1]))
    escaped = re.escape(text.lower()).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(escaped)


def check_disk(
    tables: Sequence[TableSize],
    patterns: Sequence[str],
    sample: float | None,
    folder: Path,
    *,
    server_here: bool,
) -> CopySize:
    """The copy's size, or one clear error (exit 2) when it will not fit in `folder`'s
    filesystem, with the --sample that would. `server_here`: the embedded server
    keeps its templates and clones there too; a --dsn server keeps them on its own
    disk, which pgopt cannot see."""
    size = copy_size(tables, patterns, sample)
    free = shutil.disk_usage(folder).free
    needed = size.local_bytes if server_here else size.dump_bytes
    if needed <= free:
        return size
    parts = f"the dump {format_bytes(size.dump_bytes)}"
    if server_here:
        parts += f", two templates and a clone of {format_bytes(size.database_bytes)} each"
    instead = "copy fewer tables with --table"
    for percent in SAMPLES_TRIED:
        if sample is not None and percent >= sample:
            continue
        smaller = copy_size(tables, patterns, percent)
        if (smaller.local_bytes if server_here else smaller.dump_bytes) <= free:
            instead = (
                f"--sample {percent:g} would need about "
                f"{format_bytes(smaller.local_bytes if server_here else smaller.dump_bytes)}"
                ", or copy fewer tables with --table"
            )
            break
    raise UsageError(
        f"the copy needs about {format_bytes(needed)} in {folder} ({parts}) and "
        f"{format_bytes(free)} are free: {instead}"
    )
