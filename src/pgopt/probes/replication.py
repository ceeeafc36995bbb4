"""What a hot standby's readers see: stale reads of a row just written on the primary,
and queries the standby cancels when the primary's VACUUM removes rows they need.

`stale_reads`: one client writes on the primary (a counter row, autocommit) and at
once reads the row on the standby, as an application that sends its reads to a
standby would. A read that returns the value from before the write is stale; the
probe then reads again until the write shows, and times how long that took.
Facts: the share of stale reads, and the median and largest time until a write
showed. Rate: write-then-read pairs per second.

`standby_queries`: readers on the standby run short REPEATABLE READ transactions
(two reads of the `churn` table, `hold_ms` apart, so each holds a snapshot) while a
thread on the primary updates those rows and VACUUMs the table, then pauses
(`churn_pause_ms`), in a loop: the pauses let some transactions through, so the
rate never falls to zero and the share cancelled says how many did not. Without
hot_standby_feedback, VACUUM removes row versions the standby's snapshots still
need; when replaying that removal would wait longer than
max_standby_streaming_delay, the standby cancels the query (SQLSTATE 40001; a
session caught between statements is ended, and the probe opens another).
Facts: the share of transactions cancelled and the standby's confl_snapshot count
(pg_stat_database_conflicts).
Rate: standby transactions completed per second.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any

import psycopg

from ..servers.base import BENCH_APPLICATION, Target
from .base import Arg, Probe, ProbeContext, always_available

CONFLICT_WITH_RECOVERY = "40001"  # a query cancelled, or a session ended, by the standby
VISIBLE_WITHIN_S = 5.0  # a write not on the standby by then is reported, not waited for
RETRIES = 100  # reads of the standby's own counters, 0.1 s apart
COUNTER_TABLE = "read_your_writes"
CHURN_TABLE = "churn"


def _connect(target: Target) -> psycopg.Connection[Any]:
    """A session named as pgbench's are (the wait sampler watches the primary's), with
    no statement run to name it: on a lagging standby any statement may be cancelled."""
    params = {**target.conninfo(), "application_name": BENCH_APPLICATION}
    return psycopg.connect(**params, autocommit=True, connect_timeout=10)


def _value(conn: psycopg.Connection[Any], query: str) -> int:
    row = conn.execute(query).fetchone()
    assert row is not None
    return int(row[0])


def stale_reads(ctx: ProbeContext) -> float:
    """Write on the primary, read at once on the standby; pairs per second."""
    write = f"update {COUNTER_TABLE} set v = v + 1 where id = 1 returning v"
    read = f"select v from {COUNTER_TABLE} where id = 1"
    pairs, stale, delays_ms, never = 0, 0, [], 0
    with _connect(ctx.target) as primary, _connect(ctx.standbys[0]) as standby:
        started = time.perf_counter()
        deadline = started + ctx.duration_s
        while time.perf_counter() < deadline:
            written = _value(primary, write)
            written_at = time.perf_counter()
            pairs += 1
            if _value(standby, read) >= written:
                continue
            stale += 1
            while _value(standby, read) < written:
                if time.perf_counter() - written_at > VISIBLE_WITHIN_S:
                    never += 1
                    break
            else:
                delays_ms.append(1000 * (time.perf_counter() - written_at))
        elapsed = time.perf_counter() - started
    ctx.facts["stale reads, %"] = f"{100 * stale / pairs:.3g}" if pairs else "0"
    if delays_ms:
        ctx.facts["a stale read's write showed after, ms (median)"] = (
            f"{statistics.median(delays_ms):.3g}"
        )
        ctx.facts["a stale read's write showed after, ms (max)"] = f"{max(delays_ms):.3g}"
    if never:
        ctx.facts[f"writes not on the standby within {VISIBLE_WITHIN_S:g} s"] = str(never)
    return pairs / elapsed


def _churn(target: Target, stop: threading.Event, args: tuple[int, float], seen: list[str]) -> None:
    """On the primary until `stop`: update every churn row, VACUUM the table, pause."""
    rows, pause_s = args
    try:
        with target.connect() as conn:
            while not stop.is_set():
                conn.execute(f"update {CHURN_TABLE} set v = v + 1 where id <= %s", [rows])
                conn.execute(f"vacuum {CHURN_TABLE}")
                stop.wait(pause_s)
    except psycopg.Error as e:
        seen.append(str(e).strip().splitlines()[0])


def _cancelled_by_recovery(e: psycopg.Error, conn: psycopg.Connection[Any]) -> bool:
    """The standby cancelled the statement, or ended the session (the message may not
    arrive before the connection closes), to replay the primary's WAL."""
    return e.sqlstate == CONFLICT_WITH_RECOVERY or conn.closed


def _conflicts(standby: Target) -> int:
    """The standby's count of queries cancelled for snapshot conflicts. Read after the
    churn stops, while replay may still be catching up: a query cancelled meanwhile is
    asked again."""
    query = (
        "select confl_snapshot from pg_stat_database_conflicts where datname = current_database()"
    )
    for _attempt in range(RETRIES):
        with standby.connect() as conn:
            try:
                return _value(conn, query)
            except psycopg.Error as e:
                if not _cancelled_by_recovery(e, conn):
                    raise
        time.sleep(0.1)
    raise psycopg.OperationalError(f"the standby cancelled {RETRIES} reads of its conflicts")


def standby_queries(ctx: ProbeContext) -> float:
    """Snapshot-holding reads on the standby while the primary updates and VACUUMs
    what they read; completed transactions per second."""
    hold_s = ctx.number("hold_ms") / 1000
    rows = ctx.integer("rows")
    pause_s = ctx.number("churn_pause_ms") / 1000
    total = f"select sum(v) from {CHURN_TABLE}"
    standby_target = ctx.standbys[0]
    conflicts_before = _conflicts(standby_target)
    stop, churn_errors = threading.Event(), list[str]()
    churn = threading.Thread(
        target=_churn, args=(ctx.target, stop, (rows, pause_s), churn_errors), name="pgopt-churn"
    )
    done = cancelled = 0
    churn.start()
    try:
        started = time.perf_counter()
        deadline = started + ctx.duration_s
        while time.perf_counter() < deadline:
            with _connect(standby_target) as standby:
                while time.perf_counter() < deadline:
                    try:
                        with standby.transaction():
                            standby.execute("set transaction isolation level repeatable read")
                            standby.execute(total)
                            standby.execute("select pg_sleep(%s)", [hold_s])
                            standby.execute(total)
                        done += 1
                    except psycopg.Error as e:
                        if not _cancelled_by_recovery(e, standby):
                            raise
                        cancelled += 1
                        if standby.closed:  # ended between statements: a new session
                            break
        elapsed = time.perf_counter() - started
    finally:
        stop.set()
        churn.join()
    if churn_errors:
        raise psycopg.OperationalError(f"the primary's update loop failed: {churn_errors[0]}")
    attempts = done + cancelled
    ctx.facts["standby transactions cancelled, %"] = (
        f"{100 * cancelled / attempts:.3g}" if attempts else "0"
    )
    ctx.facts["confl_snapshot on the standby"] = str(_conflicts(standby_target) - conflicts_before)
    return done / elapsed


PROBES = {
    "stale_reads": Probe(
        stale_reads,
        always_available,
        needs_standby=True,
        unit="pairs/s",
        headline=("stale reads, %",),
    ),
    "standby_queries": Probe(
        standby_queries,
        always_available,
        needs_standby=True,
        headline=("standby transactions cancelled, %",),
        args={
            "hold_ms": Arg(float, 200, minimum=0),  # a snapshot held between two reads
            "rows": Arg(int, 10_000, minimum=1),  # the churn rows updated a loop
            "churn_pause_ms": Arg(float, 500, minimum=0),  # the churn's pause a loop
        },
    ),
}
