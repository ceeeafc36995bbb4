"""A sampled copy of the source (`--sample PCT`): its schema whole, its big tables'
rows sampled, as one SQL script like pg_dump's.

pg_dump writes the schema (pre-data: tables, sequences, types, functions) and
what follows the data (post-data: indexes, constraints, triggers). The rows in
between come from a read-only session on the source: each table of at least
SAMPLE_FROM_BYTES (1 MiB, some thousands of rows) is read through `TABLESAMPLE
BERNOULLI (PCT) REPEATABLE (1)`, so every run of the same A/B copies the same
rows; smaller tables (lookup tables) come whole. Sequences keep the source's
positions.

Limits, stated in the README: tables are sampled independently, so a join of two
sampled tables finds about PCT% of its matches on each side; foreign keys are
added NOT VALID (the sample's child rows may lack their parents; new rows are
still checked); statistics and plans follow the smaller tables, so a plan that
depends on size may differ from the source's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from ..errors import UsageError, first_line
from ..redact import redact_dsn
from ..servers import read_only
from ..sqltree import WRITTEN_NAME, WRITTEN_QUALIFIED

SAMPLE_FROM_BYTES = 1 << 20
_CREATE_TABLE = re.compile(rf"^CREATE (?:UNLOGGED )?TABLE ({WRITTEN_QUALIFIED}) \(", re.MULTILINE)
# the constraint's name, then its definition (a quoted name in it may hold a ";")
_FOREIGN_KEY = re.compile(
    rf'(ADD CONSTRAINT {WRITTEN_NAME} FOREIGN KEY (?:[^;"]|"(?:[^"]|"")*")*);$', re.MULTILINE
)

COLUMNS_SQL = """\
select c.relkind::text as kind, pg_relation_size(c.oid) as bytes,
       array(select quote_ident(a.attname) from pg_attribute a
             where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
               and a.attgenerated = '' order by a.attnum) as columns
from pg_class c where c.oid = to_regclass(%s)
"""
SEQUENCES_SQL = """\
select format('%%I.%%I', schemaname, sequencename) as name, last_value::text as value
from pg_sequences where last_value is not null
"""


def write_sampled(
    pre_data: str, post_data: str, dsn: str, percent: float, script: Path
) -> dict[str, tuple[int, bool]]:
    """Write the sampled copy to `script`; per table the rows copied and whether they
    were sampled. One clear error (exit 2) when a sample leaves a table empty."""
    # each name as pg_dump writes it, once: a quoted name holding a line that reads as
    # another CREATE TABLE names a table the catalog then answers for, or none
    tables = list(dict.fromkeys(_CREATE_TABLE.findall(pre_data)))
    copied: dict[str, tuple[int, bool]] = {}
    where = redact_dsn(dsn)
    try:
        with (
            read_only.connect(dsn, "ab", autocommit=False, copying=True) as conn,
            script.open("w") as out,
        ):
            out.write(pre_data)
            out.write("\n-- pgopt ab: the rows, sampled where a table is big\n")
            for table in tables:
                found = _copy_table(conn, table, percent, out)
                if found is not None:
                    copied[table] = found
            for name, value in conn.execute(SEQUENCES_SQL, {}).fetchall():
                if name in pre_data:
                    position = sql.SQL("SELECT pg_catalog.setval({}, {}, true);\n")
                    out.write(
                        position.format(sql.Literal(name), sql.Literal(int(value))).as_string(conn)
                    )
            out.write(_foreign_keys_not_valid(post_data))
    except psycopg.Error as e:
        raise UsageError(f"sampling {where}: {first_line(e)}") from e
    return copied


def _copy_table(
    conn: psycopg.Connection[Any], table: str, percent: float, out: Any
) -> tuple[int, bool] | None:
    row = conn.execute(COLUMNS_SQL, (table,)).fetchone()
    if row is None or row[0] != "r":
        return None  # a partitioned parent (its partitions are copied), a foreign table
    _kind, size, columns = row
    listed = sql.SQL(", ").join(sql.SQL(c) for c in columns)
    source: sql.Composable = sql.SQL(table)
    sampled = size >= SAMPLE_FROM_BYTES
    if sampled:
        source = sql.SQL("{} tablesample bernoulli ({}) repeatable (1)").format(
            source, sql.Literal(percent)
        )
    query = sql.SQL("copy (select {} from {}) to stdout").format(listed, source)
    out.write(f"COPY {table} ({', '.join(columns)}) FROM stdin;\n")
    rows = 0
    with conn.cursor() as cur, cur.copy(query) as copy:
        for data in copy:
            block = bytes(data)
            out.write(block.decode())
            rows += block.count(b"\n")
    out.write("\\.\n\n")
    if sampled and rows == 0:
        raise UsageError(
            f"--sample {percent:g} left no rows of {table} ({size / 2**20:,.1f} MiB): "
            "take a larger percentage"
        )
    return rows, sampled


def _foreign_keys_not_valid(post_data: str) -> str:
    """Foreign keys added NOT VALID: a sample's child rows may lack their parents."""
    return _FOREIGN_KEY.sub(r"\1 NOT VALID;", post_data)
