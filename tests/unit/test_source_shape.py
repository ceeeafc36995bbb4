"""How the source's clients ran, from what tells it (source/shape.py): a watch
that saw work, what the source keeps since a reset, or nothing (said); and what a
faster database is worth to the application (analysis/amdahl.py). No server."""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any

import pytest

from pgopt.analysis.amdahl import (
    application_bound,
    round_pairs,
    shared_cpu_estimate,
    shared_cpu_interval,
)
from pgopt.source.shape import HostCpu, Kept, Watch, shape

NOW = 1_800_000_000.0


def watch(**changes: Any) -> Watch:
    base: dict[str, Any] = {
        "seconds": 10.0,
        "calls": 18_000,
        "commits": 1_000,
        "sessions": 4,
        "parameterized": 60,
        "literal": 0,
        "active": 60,
        "idle_in_request": 20,
        "idle_in_transaction": 0,
    }
    return Watch(**{**base, **changes})


IDLE = watch(calls=0, commits=0, sessions=0, parameterized=0, active=0, idle_in_request=0)


def kept(**changes: Any) -> Kept:
    base: dict[str, Any] = {
        "calls": 180_000,
        "commits": 10_000,
        "statements_reset": NOW - 600,
        "database_reset": NOW - 601,
        "now": NOW,
        "active_ms": 300_000.0,
        "idle_in_transaction_ms": 100_000.0,
    }
    return Kept(**{**base, **changes})


def test_a_watch_that_saw_work_tells_the_shape_the_clients_and_the_share() -> None:
    work = shape(watch(), kept())
    assert work.statements_per_commit == 18.0 and work.clients == 4
    assert work.protocol == "prepared"
    assert work.per_commit_from == "the 10-s watch"
    assert work.database_share == pytest.approx(0.75)  # 60 of 80 busy samples


def test_an_idle_watch_reads_what_the_source_keeps_when_both_were_reset_together() -> None:
    work = shape(IDLE, kept())
    assert work.statements_per_commit == 18.0
    assert work.per_commit_from.startswith("what the source keeps over the 10 minutes")
    assert work.clients is None and "clients: unknown" in work.note
    assert work.database_share == pytest.approx(0.75)  # active over active + in transaction
    assert "upper bound" in work.database_share_from


def test_an_idle_source_s_connected_time_gives_about_the_fewest_clients_at_once() -> None:
    """pgbench's 4 clients for 6 s of an 11-s window (on PostgreSQL 15, 2026-11-28:
    6 sessions opened, 24,008 ms connected): 2.2 connected on average, so about 3 at
    once at some time; the clients stay unknown, and the verdict says so."""
    work = shape(IDLE, kept(now=NOW - 589, sessions=5, session_ms=24_008.0))
    assert work.clients is None and work.clients_estimated == 3
    assert "clients: unknown" in work.note
    assert "5 opened, connected 2.2 at once on average, so about 3" in work.note
    # as many as were opened: still unknown (a session idle since before the reset
    # reports time from before it: an estimate, not a count)
    every = shape(IDLE, kept(now=NOW - 595, sessions=4, session_ms=16_400.0))
    assert every.clients is None and every.clients_estimated == 4
    # connected less than one at once on average: no estimate worth a replay's clients
    assert shape(IDLE, kept(sessions=3, session_ms=60_000.0)).clients_estimated is None
    assert shape(IDLE, kept()).clients_estimated is None  # no session figures kept


def test_sessions_connected_but_idle_during_the_watch_are_its_clients() -> None:
    """A pool's sessions stay connected when the application is quiet: the watch
    counts them though they run nothing."""
    work = shape(replace(IDLE, sessions=8), kept(sessions=9, session_ms=4_500_000.0))
    assert work.clients == 8 and work.clients_estimated is None
    assert work.clients_from == "the 10-s watch (its sessions connected, all idle)"
    assert "its clients: 8, connected and idle during the watch" in work.note
    # fewer connected than the counters give at once (a DBA's lone psql): the counters
    lone = shape(replace(IDLE, sessions=1), kept(now=NOW - 595, sessions=4, session_ms=16_400.0))
    assert lone.clients is None and lone.clients_estimated == 4


@pytest.mark.parametrize(
    ("counters", "why"),
    [
        (kept(database_reset=None), "pg_stat_database was never reset"),
        (kept(database_reset=NOW - 3600), "reset 50 minutes apart"),
        (kept(calls=0, commits=0), "ran no statement since its statistics' reset"),
    ],
)
def test_counters_of_different_windows_are_not_read_as_one(counters: Kept, why: str) -> None:
    work = shape(IDLE, counters)
    assert work.statements_per_commit is None and work.per_commit_from == ""
    assert why in work.note and "the transaction shape is unknown" in work.note
    assert "--source-log" in work.note and "pg_stat_statements_reset()" in work.note


def test_nothing_kept_and_not_watched_is_unknown_with_the_reason() -> None:
    work = shape(None, None, "PostgreSQL 13 and older keep no pg_stat_statements reset time")
    assert work.statements_per_commit is None
    assert work.note.startswith("not watched (--source-sample 0), and PostgreSQL 13")


def test_a_small_gap_between_the_resets_is_one_window() -> None:
    assert shape(IDLE, kept(database_reset=NOW - 603)).statements_per_commit == 18.0


def test_amdahls_bound() -> None:
    assert application_bound(2.0, 1.0) == pytest.approx(2.0)
    assert application_bound(2.0, 0.0) == pytest.approx(1.0)
    # the shop of issue 56: the database x14.10, the application x2.41: about 63% of
    # its time was the database's
    assert application_bound(14.10, 0.63) == pytest.approx(2.41, abs=0.02)
    assert application_bound(0.5, 0.5) == pytest.approx(1 / 1.5)  # slower, less so


def test_an_application_on_the_databases_busy_cpus_gets_the_cpu_it_saves() -> None:
    # the shop of bench/replay_truth.py (2026-11-28): its workers and the database on
    # two cores, all busy; the database 1,338 of 2,869 µs of CPU a request (47%), its
    # two indexes took the replay's server CPU a transaction from 1,784 to 430 µs;
    # the shop itself gained x1.63, where Amdahl's bound on time said x1.19
    share = 1338 / (1338 + 1531)
    assert shared_cpu_estimate(3.34, share, 430 / 1784) == pytest.approx(1.55, abs=0.01)
    assert shared_cpu_estimate(3.34, 1.0, 0.1) == 3.34  # never more than the database's
    assert shared_cpu_estimate(1.0, 0.5, 1.0) == 1.0
    assert shared_cpu_estimate(0.5, 0.5, 2.0) == pytest.approx(1 / 1.5)  # slower, less so


def test_the_estimates_interval_comes_from_each_rounds_pair() -> None:
    """Each round's B against its A (rate, CPU a transaction) gives an estimate; their
    geometric mean's interval holds it. Rounds without a figure, or B's alone, drop."""
    a = [(1, 100.0, 2.0, 1000), (2, 110.0, 2.2, 1100), (3, 90.0, 1.8, 900), (4, 95.0, 0.0, 950)]
    b = [(1, 300.0, 1.5, 3000), (2, 320.0, 2.4, 3200), (3, 300.0, 1.8, 3000), (5, 1.0, 1.0, 1)]
    pairs = round_pairs(a, b)
    assert pairs == [
        pytest.approx((3.0, 0.25)),
        pytest.approx((320 / 110, 0.375)),
        pytest.approx((300 / 90, 0.3)),
    ]
    interval = shared_cpu_interval(pairs, 0.5)
    assert interval is not None
    each = [shared_cpu_estimate(r, 0.5, c) for r, c in pairs]
    low, high = interval
    assert low < statistics.geometric_mean(each) < high
    assert low < min(each) and max(each) < high  # three rounds: wider than their spread
    alike = shared_cpu_interval([(3.0, 0.25)] * 3, 0.5)  # rounds alike: no spread
    assert alike == pytest.approx((1.6, 1.6))
    assert shared_cpu_interval(pairs[:1], 0.5) is None  # one round: no interval


def test_the_machines_cpu_over_the_watch_is_carried_with_the_shape() -> None:
    host = HostCpu(seconds=10, cores=2, busy_s=19.0, database_s=9.5)
    assert host.busy_share == pytest.approx(0.95) and host.database_share == 0.5
    assert HostCpu(10, 2, 0.0, 0.0).database_share is None
    work = shape(watch(host=host), None)
    assert work.host_busy == pytest.approx(0.95) and work.database_cpu_share == 0.5
    assert shape(watch(), None).host_busy is None  # a source on another machine: unknown
