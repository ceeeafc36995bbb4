"""Ingest login records three ways from one Python client: one INSERT per row, one
multi-row INSERT per batch, COPY per batch.

Seed 000's checklist names COPY for bulk writes; pgbench cannot send COPY data, so
these probes drive the three ways alike from psycopg, the same rows in the same
batches (`rows_per_commit`, 1,000 by default, one commit per batch), so they
differ only in how the rows travel. Row n is a pure function of n (`login_row`):
the lab's check proves every method wrote exactly rows 1..N, none twice. Each run
starts from an empty table (TRUNCATE, untimed); rows per second include making
the rows in Python, the same work for each method.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import psycopg

from ..servers.base import BENCH_APPLICATION
from .base import Arg, Probe, ProbeContext, always_available

TABLE = "login_ingest"
COLUMNS = "(seq, userid, login_time, ip)"
USERS = 100_000
EPOCH = datetime(2026, 1, 1)

Row = tuple[int, int, datetime, str]
Batch = Callable[[psycopg.Connection[Any], list[Row]], None]


def login_row(n: int) -> Row:
    """Login record number n (1-based): the lab's check recomputes it in SQL."""
    ip = f"10.{(n >> 16) % 256}.{(n >> 8) % 256}.{n % 256}"
    return n, n % USERS + 1, EPOCH + timedelta(milliseconds=n), ip


def _ingest(ctx: ProbeContext, write: Batch) -> float:
    """Write batches of rows with `write`, one commit each, until the run's duration
    passes; return rows per second."""
    per_batch = ctx.integer("rows_per_commit")
    with ctx.target.connect(autocommit=False) as conn:
        # named as pgbench's sessions are, so the wait sampler watches this one
        conn.execute("select set_config('application_name', %s, false)", [BENCH_APPLICATION])
        conn.execute(f"truncate {TABLE}")
        conn.commit()
        done = 0
        started = time.perf_counter()
        deadline = started + ctx.duration_s
        while time.perf_counter() < deadline:
            write(conn, [login_row(n) for n in range(done + 1, done + per_batch + 1)])
            conn.commit()
            done += per_batch
        return done / (time.perf_counter() - started)


def _row_by_row(conn: psycopg.Connection[Any], rows: list[Row]) -> None:
    cur = conn.cursor()
    query = f"insert into {TABLE} {COLUMNS} values (%s, %s, %s, %s)"
    for row in rows:
        cur.execute(query, row, prepare=True)


def _multi_row(conn: psycopg.Connection[Any], rows: list[Row]) -> None:
    values = ", ".join(["(%s, %s, %s, %s)"] * len(rows))
    params = [value for row in rows for value in row]
    conn.execute(f"insert into {TABLE} {COLUMNS} values {values}", params, prepare=True)


def _copy(conn: psycopg.Connection[Any], rows: list[Row]) -> None:
    with conn.cursor().copy(f"copy {TABLE} {COLUMNS} from stdin") as copy:
        for row in rows:
            copy.write_row(row)


def insert_rows(ctx: ProbeContext) -> float:
    """One prepared INSERT per row."""
    return _ingest(ctx, _row_by_row)


def insert_multirow(ctx: ProbeContext) -> float:
    """One prepared INSERT carrying the whole batch."""
    return _ingest(ctx, _multi_row)


def copy_rows(ctx: ProbeContext) -> float:
    """One COPY FROM STDIN per batch."""
    return _ingest(ctx, _copy)


ROWS_PER_COMMIT = Arg(int, 1000, minimum=1)
# a statement's parameters are counted in 16 bits (the protocol's Bind): 4 a row
MULTIROW = Arg(int, 1000, minimum=1, maximum=65535 // 4)
PROBES = {
    "insert_rows": Probe(insert_rows, always_available, args={"rows_per_commit": ROWS_PER_COMMIT}),
    "insert_multirow": Probe(insert_multirow, always_available, args={"rows_per_commit": MULTIROW}),
    "copy_rows": Probe(copy_rows, always_available, args={"rows_per_commit": ROWS_PER_COMMIT}),
}
