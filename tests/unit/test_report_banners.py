"""The lines a replay's report opens with (report/banners.py, report/replay.py): what
the database's ratio is worth to the application, a change that acts on commits
measured on an unknown transaction shape, and a client that limited the rate. Built
from a stored replay of sysbench's oltp_write_only (B: synchronous_commit = off)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pgopt.analysis.amdahl import (
    application_bound,
    round_pairs,
    shared_cpu_estimate,
    shared_cpu_interval,
)
from pgopt.model.result import CpuShare, LabResult
from pgopt.report.banners import banners
from pgopt.store import load_result

RESULT = Path(__file__).parent.parent / "data" / "results" / "ab-replay"


def _texts(result: LabResult) -> dict[str, str]:
    return {spans[0].text: "".join(s.text for s in spans[1:]) for _, spans in banners(result)}


@pytest.fixture
def replay() -> LabResult:
    return load_result(RESULT)


def test_the_application_gains_at_most_amdahls_bound(replay: LabResult) -> None:
    assert replay.fidelity is not None
    assert "The application" not in _texts(replay)  # no share read: nothing said
    shared = replace(
        replay,
        fidelity=replace(replay.fidelity, database_share=0.4, database_share_from="the watch"),
    )
    text = _texts(shared)["The application"]
    b = shared.step("b").ratio_vs_previous
    assert b is not None
    assert f"at most ×{application_bound(b.median, 0.4):.2f}" in text
    assert "the database is 40% of the source's busy session time (from the watch)" in text


def test_an_application_on_the_sources_own_cpus_gets_the_cpu_it_saves(replay: LabResult) -> None:
    busy = 0.67
    assert replay.fidelity is not None
    here = replace(
        replay,
        fidelity=replace(
            replay.fidelity,
            database_share=0.4,
            database_share_from="the watch",
            host_busy=busy,
            database_cpu_share=0.5,
        ),
    )
    text = _texts(here)["The application"]
    assert f"whose CPUs were {busy:.0%} busy during the watch, the database 50% of that" in text
    assert "up to the database's own ratio" in text  # clients that only wait for it
    a, b = here.step("a").server_cpu_us_per_tx, here.step("b").server_cpu_us_per_tx
    assert a is not None and b is not None
    estimate = shared_cpu_estimate(
        here.step("b").ratio_vs_baseline.median, 0.5, b.median / a.median
    )
    # an application whose work is CPU here, with the interval its 3 rounds give
    pairs = round_pairs(
        [(r.round, r.tps, r.server_cpu_s, r.transactions) for r in here.step("a").runs],  # type: ignore[misc]
        [(r.round, r.tps, r.server_cpu_s, r.transactions) for r in here.step("b").runs],  # type: ignore[misc]
    )
    interval = shared_cpu_interval(pairs, 0.5)
    assert interval is not None and len(pairs) == 3
    assert f"about ×{estimate:.2f} [{interval[0]:.2f}–{interval[1]:.2f}] to it" in text
    assert "the interval from its 3 rounds" in text
    # CPUs idle most of the watch (a source that went quiet): no estimate for them
    assert here.fidelity is not None
    idle = replace(here, fidelity=replace(here.fidelity, host_busy=0.04))
    text = _texts(idle)["The application"]
    assert "whose CPUs were 4% busy during the watch" in text
    assert "idle more than half the time" in text and "to it" not in text.split("watch")[-1]


def test_a_change_to_commits_on_an_unknown_shape_says_so(replay: LabResult) -> None:
    assert replay.fidelity is not None
    assert "A verdict that depends on commits" not in _texts(replay)  # its shape was read
    unknown = replace(replay, fidelity=replace(replay.fidelity, source_statements_per_commit=None))
    text = _texts(unknown)["A verdict that depends on commits"]
    assert text.startswith(": synchronous_commit acts on commits")


def test_a_client_that_kept_its_threads_busy_limits_the_ratio(replay: LabResult) -> None:
    assert "Limited by the client" not in _texts(replay)
    busy = replace(replay.step("b"), cpu=CpuShare(1.9, 2, 0.1))
    steps = tuple(busy if s.name == "b" else s for s in replay.steps)
    text = _texts(replace(replay, steps=steps))["Limited by the client"]
    assert "b (95% of 2 threads)" in text
