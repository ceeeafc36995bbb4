"""The wait sampler on a real server: sessions in known states are counted as such,
from an ordinary or a read-only session."""

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg
import pytest

from pgopt.observe.sampler import WaitSampler
from pgopt.servers.base import BENCH_APPLICATION
from pgopt.servers.embedded import EmbeddedTarget

# the sampler counts samples in a second: work on the other core would thin them
pytestmark = pytest.mark.serial


@contextmanager
def sessions(server: EmbeddedTarget) -> Iterator[None]:
    """A session sleeping in the server, one idle in a transaction, one idle, all of
    pgopt's workload; and a stranger idle in a transaction, not watched."""
    with ExitStack() as stack:

        def open_session(app: str) -> psycopg.Connection[Any]:
            params = {**server.conninfo(), "application_name": app}
            return stack.enter_context(psycopg.connect(**params, autocommit=True))

        sleeping, in_tx, idle = (open_session(BENCH_APPLICATION) for _ in range(3))
        stranger = open_session("someone-else")
        for conn in (in_tx, stranger):
            conn.execute("begin")
            conn.execute("select 1")
        idle.execute("select 1")

        def sleep() -> None:
            with contextlib.suppress(psycopg.errors.QueryCanceled):
                sleeping.execute("select pg_sleep(60)")

        sleeper = threading.Thread(target=sleep)
        sleeper.start()
        with psycopg.connect(**server.conninfo(), autocommit=True) as watcher:
            for _ in range(300):  # until the sleep has begun, however busy the machine
                row = watcher.execute(
                    "select count(*) from pg_stat_activity where wait_event = 'PgSleep'"
                ).fetchone()
                if row and row[0]:
                    break
                time.sleep(0.02)
        try:
            yield
        finally:
            sleeping.cancel()
            sleeper.join()
            for conn in (in_tx, stranger):
                conn.execute("rollback")


@pytest.mark.parametrize("read_only", [False, True])
def test_sessions_are_counted_by_what_they_do(server: EmbeddedTarget, read_only: bool) -> None:
    with sessions(server), WaitSampler(server, interval_s=0.04, read_only=read_only) as sampler:
        sampler.begin_phase("first")
        time.sleep(1.0)
        sampler.end_phase()
    assert sampler.error is None
    assert 10 <= sampler.samples <= 35  # about 25 in a second, fewer on a busy machine
    counts = sampler.counts
    # each watched session in every sample, by what it is doing; the stranger unseen
    assert set(counts) == {"Timeout:PgSleep", "IdleInTransaction", "Client:ClientRead"}
    assert max(counts.values()) - min(counts.values()) <= 2
    assert abs(counts["Timeout:PgSleep"] - sampler.samples) <= 2
    assert sum(sampler.phase_counts["first"].values()) >= 3 * (sampler.samples - 4)
    assert sampler.cost.server_cpu_s is not None and sampler.cost.server_cpu_s >= 0
