"""The keys of the rows the source's clients wrote during a watch, read by the rows'
xmin in the replay's read-only session (the one way a watch learns which keys clients
that send prepared statements ask for: their calls show `$n`, not their values).

A row that an INSERT or an UPDATE wrote carries the writer's transaction id in its
xmin. The watch notes the transaction counter as it starts (queries/watch_xid.sql);
afterwards the rows whose xmin is younger than that are the rows written since, and
their keys are the keys the clients updated or inserted (a key they deleted is gone;
sysbench's DELETE inserts its key again). What this does not tell:

- how often each key was written: a row shows its last writer only, so a hot key
  written a thousand times counts once, like a cold key written once (the shape is
  flattened toward the keys' spread, not the calls');
- the keys the clients read, which may be others.

A table over MAX_PAGES pages is read in a sample of its pages (TABLESAMPLE SYSTEM),
so the read stays one scan of about MAX_PAGES pages on a production server; a table
whose size cannot be read is not read at all. Rows frozen since (xmin shown as
FrozenTransactionId) are older than any watch. Where a table's keys cannot be read
(a view or a foreign table has no xmin, the role may not read it, the read ran into
the session's statement or lock timeout), `KeysUnread` says why, and the workload's
README says it beside the keys drawn from the statistics instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from ..errors import first_line
from ..queries import load
from ..servers.read_only import dict_rows

MIN_KEYS = 20  # fewer rows written during the watch pin the replay to a few keys
MAX_KEYS = 20_000  # keys read of one column, at most: a random sample of them
MAX_PAGES = 12_800  # 100 MB of 8-kB pages: a larger table is read in a sample of them


class KeysUnread(Exception):
    """Why a table's written keys were not read (its size, or the read itself)."""


@dataclass(frozen=True)
class WrittenKeys:
    """The keys of one column among the rows written since the watch started, and
    the share of the table's pages read for them (1.0: all)."""

    values: tuple[str, ...]
    pages_read: float

    @property
    def origin(self) -> str:
        sampled = ""
        if self.pages_read < 1:
            sampled = f", in a sample of {self.pages_read:.0%} of its pages"
        return (
            f"the keys of the {len(self.values):,} rows written during the watch (their "
            f"xmin{sampled}; each key once, however often it was written)"
        )


def watch_xid(conn: psycopg.Connection[Any]) -> str:
    """The transaction counter now, as a row's xmin would hold it."""
    return str(dict_rows(conn, load("watch_xid"))[0]["xid"])


def written_keys(
    conn: psycopg.Connection[Any],
    schema: str,
    table: str,
    columns: Sequence[str],
    since_xid: str,
    pages: float,
) -> dict[str, WrittenKeys]:
    """The non-null values of each of `columns` in the rows of `schema`.`table` written
    since the transaction counter was `since_xid`, in one scan of the table (`pages`
    pages by the planner's figure, or its size on disk where that is more: a figure
    not yet analyzed, a partitioned table's); a column with fewer than MIN_KEYS left
    out; KeysUnread where the table cannot be read so (a view, a foreign table, no
    privilege, a timeout), or its size cannot be read."""
    pages = max(pages, pages_on_disk(conn, schema, table))
    share = min(1.0, MAX_PAGES / pages) if pages > 0 else 1.0
    source = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table))
    if share < 1.0:
        source = sql.SQL("{} tablesample system ({})").format(source, sql.Literal(100 * share))
    names = [sql.Identifier(c) for c in columns]
    # age() counts from this statement's own transaction counter, for a row's xmin and
    # for the watch's start alike: a row written since is younger than the start
    query = sql.SQL(
        "select {values} from {t} where ({any}) "
        "and age(xmin) <= age({since}::xid) order by random() limit {n}"
    ).format(
        values=sql.SQL(", ").join(sql.SQL("{}::text").format(c) for c in names),
        any=sql.SQL(" or ").join(sql.SQL("{} is not null").format(c) for c in names),
        t=source,
        since=sql.Literal(since_xid),
        n=sql.Literal(MAX_KEYS),
    )
    try:
        with conn.cursor() as cur:
            rows = cur.execute(query).fetchall()
    except psycopg.Error as e:
        raise KeysUnread(first_line(e)) from e
    out = {}
    for i, column in enumerate(columns):
        values = tuple(str(r[i]) for r in rows if r[i] is not None)
        if len(values) >= MIN_KEYS:
            out[column] = WrittenKeys(values, share)
    return out


def pages_on_disk(conn: psycopg.Connection[Any], schema: str, table: str) -> float:
    """The table's pages on disk, its partitions' with it; KeysUnread where it cannot
    tell (the table is then not read: a whole scan of it is what the sample avoids)."""
    query = (
        "select greatest(pg_relation_size(r), (select coalesce(sum(pg_relation_size(relid)), "
        "0) from pg_partition_tree(r)))::float8 / current_setting('block_size')::int as pages "
        "from (select format('%%I.%%I', %s::text, %s::text)::regclass as r) t"
    )
    try:
        return float(dict_rows(conn, query, (schema, table))[0]["pages"])
    except psycopg.Error as e:
        raise KeysUnread(f"its size on disk cannot be read: {first_line(e)}") from e
