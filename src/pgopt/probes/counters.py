"""Counters from one Python client: Redis INCR against PostgreSQL nextval().

Seed 004 quotes a test of 10M Redis INCRs (824 s) against 10M `SELECT nextval()`
(892 s) from Python. These probes repeat it on this machine: the same loop, the
same kind of client (redis-py, psycopg), one by one and batched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg
import redis

from ..redact import redact_dsn
from .base import Arg, Probe, ProbeContext, always_available

DEFAULT_REDIS = "redis://127.0.0.1:6379/0"
KEY = "pgopt:counter"


def redis_url(ctx: ProbeContext) -> str:
    return ctx.redis_url or DEFAULT_REDIS


def redis_unavailable(ctx: ProbeContext) -> str | None:
    try:
        client = redis.Redis.from_url(redis_url(ctx), socket_connect_timeout=2)
        client.ping()
        client.close()
    except (redis.RedisError, OSError, ValueError) as e:
        return f"no Redis at {redact_dsn(redis_url(ctx))} ({type(e).__name__}); pass --redis URL"
    return None


def _timed_loop(duration_s: float, step: int, body: Callable[[], object]) -> float:
    """Call `body()` until `duration_s` passes; return units (`step` per call) per second."""
    done = 0
    started = time.perf_counter()
    deadline = started + duration_s
    while time.perf_counter() < deadline:
        body()
        done += step
    return done / (time.perf_counter() - started)


def redis_incr(ctx: ProbeContext) -> float:
    """INCR one by one: one round trip per value."""
    client = redis.Redis.from_url(redis_url(ctx))
    try:
        client.delete(KEY)
        return _timed_loop(ctx.duration_s, 1, lambda: client.incr(KEY))
    finally:
        client.delete(KEY)
        client.close()


def redis_incr_pipelined(ctx: ProbeContext) -> float:
    """`batch` INCRs per round trip (a pipeline, no transaction)."""
    batch = ctx.integer("batch")
    client = redis.Redis.from_url(redis_url(ctx))

    def one_round() -> None:
        pipe = client.pipeline(transaction=False)
        for _ in range(batch):
            pipe.incr(KEY)
        pipe.execute()

    try:
        client.delete(KEY)
        return _timed_loop(ctx.duration_s, batch, one_round)
    finally:
        client.delete(KEY)
        client.close()


def _sequence_oid(conn: psycopg.Connection[Any], ctx: ProbeContext) -> int:
    """The sequence named in probe_args, resolved once (not per call)."""
    row = conn.execute("select %s::regclass::oid", [ctx.text("sequence")]).fetchone()
    assert row is not None
    return int(row[0])


def nextval(ctx: ProbeContext) -> float:
    """`select nextval(oid)` one by one, prepared, from one psycopg connection."""
    with ctx.target.connect() as conn:
        cur = conn.cursor()
        args = (_sequence_oid(conn, ctx),)
        query = "select nextval(%s::oid)"
        return _timed_loop(
            ctx.duration_s, 1, lambda: cur.execute(query, args, prepare=True).fetchone()
        )


def nextval_batch(ctx: ProbeContext) -> float:
    """`batch` values per call: `select nextval(oid) from generate_series(1, batch)`."""
    batch = ctx.integer("batch")
    with ctx.target.connect() as conn:
        cur = conn.cursor()
        args = (_sequence_oid(conn, ctx), batch)
        query = "select nextval(%s::oid) from generate_series(1, %s)"
        return _timed_loop(
            ctx.duration_s, batch, lambda: cur.execute(query, args, prepare=True).fetchall()
        )


BATCH = Arg(int, 1000, minimum=1)  # values a round trip
SEQUENCE = Arg(str)  # the sequence's name, as nextval() takes it
PROBES = {
    "redis_incr": Probe(redis_incr, redis_unavailable),
    "redis_incr_pipelined": Probe(redis_incr_pipelined, redis_unavailable, args={"batch": BATCH}),
    "nextval": Probe(nextval, always_available, args={"sequence": SEQUENCE}),
    "nextval_batch": Probe(
        nextval_batch, always_available, args={"sequence": SEQUENCE, "batch": BATCH}
    ),
}
