"""Interleaved slices (issue 58): which rounds are cut, in which turns and seeds, and
how a step's slices join into its run (pure)."""

from collections import Counter
from pathlib import Path

import pytest

from pgopt.analysis.observed import joined_observation, merged_stats
from pgopt.engine.plan import (
    Slicing,
    as_whole,
    crowded_reason,
    plan_steps,
    slice_orders,
    slice_seed,
    whole_runs_reason,
)
from pgopt.errors import UsageError
from pgopt.lab import load_lab, resolve_lab
from pgopt.model.observation import Observation, SamplerCost
from pgopt.params import SLICE_S, resolve_params
from pgopt.pgbench.combine import combined
from pgopt.pgbench.parse import ScriptSummary, Summary
from pgopt.pgbench.record import PgbenchResult
from pgopt.pgbench.transaction_log import TransactionLog

from .test_lab_load import write_lab
from .test_plan import FACTS, plan_for


def test_turns_alternate_the_rounds_order_so_a_linear_drift_falls_on_both() -> None:
    assert slice_orders(("b", "a"), 4) == [("b", "a"), ("a", "b"), ("b", "a"), ("a", "b")]
    turns = slice_orders(("a", "b", "c"), 2)
    assert turns == [("a", "b", "c"), ("c", "b", "a")]
    # over two slices every step holds every position once on average
    places = Counter((name, i) for turn in turns for i, name in enumerate(turn) if name != "b")
    assert places == {("a", 0): 1, ("a", 2): 1, ("c", 0): 1, ("c", 2): 1}


def test_every_slice_has_its_own_seed_and_the_same_seed_gives_the_same_slices() -> None:
    seeds = [slice_seed(12345, n) for n in range(1, 11)]
    assert len(set(seeds)) == 10
    assert seeds == [slice_seed(12345, n) for n in range(1, 11)]
    assert slice_seed(12346, 1) != seeds[0]


def test_smoke_lab_is_sliced_but_its_detailed_first_round() -> None:
    lab = resolve_lab("smoke")
    params = resolve_params(lab, duration=10, reps="auto")
    plan = plan_steps(lab, params, FACTS)
    segment = plan.segments[0]
    assert segment.slice_s == SLICE_S == 1 and segment.why_whole == ""
    assert [r.slices for r in segment.rounds] == [1] + [10] * 9  # --latencies first
    assert "round 1 whole" in segment.describe_slicing()
    # --dry-run builds no data: whether it crowds shared_buffers is said as a condition
    assert segment.describe_slicing().endswith("once built, is more than shared_buffers")
    every = plan_steps(lab, resolve_params(lab, duration=10, latencies="none"), FACTS)
    assert {r.slices for r in every.segments[0].rounds} == {10}


@pytest.mark.parametrize(
    ("overrides", "why"),
    [
        ({"slice_s": 0}, "--slice 0"),
        ({"duration": 3, "slice_s": 2}, "runs of 3s are shorter than two slices of 2s"),
        ({"latencies": "all"}, "--latencies all"),
    ],
)
def test_runs_stay_whole_where_asked_or_too_short(overrides: dict[str, object], why: str) -> None:
    lab = resolve_lab("smoke")
    params = resolve_params(lab, **overrides)  # type: ignore[arg-type]
    plan = plan_steps(lab, params, FACTS)
    assert plan.segments[0].slice_s == 0
    assert plan.segments[0].why_whole.startswith(why)
    assert {r.slices for r in plan.segments[0].rounds} == {1}


def test_what_a_slice_cannot_hold_keeps_the_runs_whole(tmp_path: Path) -> None:
    lab = load_lab(write_lab(tmp_path / "mine"))
    params = resolve_params(lab, duration=10)
    steps = list(lab.steps)
    assert whole_runs_reason(lab, steps, params, across=False) == ""
    assert whole_runs_reason(lab, steps, params, across=True) == (
        "its runs span more than one server"
    )
    for lab_name, why in (
        ("batch", "the lab's figure is phases, not pgbench's rate"),
        ("ingest", "is timed by a probe"),
        ("replicas", "its runs span more than one server"),
    ):
        other = resolve_lab(lab_name)
        reason = whole_runs_reason(other, list(other.steps), params, across=False)
        assert why in reason, (lab_name, reason)


def test_a_restart_before_every_run_keeps_the_runs_whole(tmp_path: Path) -> None:
    slicing = Slicing(slice_s=1, duration_s=10, latencies="none")
    sliced = plan_for(tmp_path / "a", slices=slicing)
    assert sliced.segments[0].slice_s == 1
    assert {r.slices for r in sliced.segments[0].rounds} == {10}
    restarting = plan_for(tmp_path / "b", slices=slicing, restart=True)
    segment = restarting.segments[0]
    assert segment.slice_s == 0 and segment.why_whole == "every run starts on a fresh postmaster"
    assert {r.slices for r in segment.rounds} == {1}


def test_steps_whose_data_together_is_more_than_shared_buffers_run_whole(
    tmp_path: Path,
) -> None:
    mib = 2**20
    assert crowded_reason(120 * mib, 128 * mib) == ""  # A's and B's data fit together
    assert crowded_reason(128 * mib, 128 * mib) == ""
    why = crowded_reason(212 * mib, 128 * mib)
    assert why.startswith("the steps' data together (212 MiB) is more than shared_buffers (128")
    sliced = plan_for(tmp_path, slices=Slicing(slice_s=1, duration_s=10, latencies="first"))
    segment = sliced.segments[0]
    assert [r.slices for r in segment.rounds][:3] == [1, 10, 10]
    whole = as_whole(segment, why)
    assert whole.slice_s == 0 and whole.why_whole == why
    assert {r.slices for r in whole.rounds} == {1}
    # the rounds keep their orders and seeds: only how they are cut changes
    assert [(r.number, r.order, r.pgbench_seed) for r in whole.rounds] == [
        (r.number, r.order, r.pgbench_seed) for r in segment.rounds
    ]
    assert whole.describe_slicing() == f"whole runs ({why})"


def test_a_negative_slice_is_refused() -> None:
    with pytest.raises(UsageError, match="--slice takes seconds"):
        resolve_params(resolve_lab("smoke"), slice_s=-1)


def _summary(tps: float, transactions: int, latency: float, scripts: tuple[int, ...]) -> Summary:
    return Summary(
        transaction_type=None,
        query_mode="prepared",
        clients=2,
        threads=2,
        duration_s=1.0,
        transactions=transactions,
        transactions_target=None,
        failed=1,
        retried=0,
        latency_avg_ms=latency,
        latency_stddev_ms=0.5,
        initial_connection_ms=3.0,
        tps=tps,
        tps_kind="without initial connection time",
        scripts=tuple(ScriptSummary(i + 1, f"s{i}", 1, n, float(n)) for i, n in enumerate(scripts)),
    )


def _result(summary: Summary, wall: float) -> PgbenchResult:
    log = TransactionLog(__import__("array").array("q"), (), 1.0)
    return PgbenchResult(("pgbench",), summary, log, "out", "", wall, 0.2, 0.01)


def test_a_steps_slices_join_into_one_run() -> None:
    one = _result(_summary(1000.0, 1000, 2.0, (600, 400)), 1.1)
    two = _result(_summary(3000.0, 3000, 1.0, (1800, 1200)), 1.2)
    run = combined([one, two])
    assert run.summary.transactions == 4000 and run.summary.failed == 2
    assert run.summary.tps == 2000.0  # equal seconds: the mean of the rates
    assert run.summary.latency_avg_ms == pytest.approx((2.0 * 1000 + 1.0 * 3000) / 4000)
    assert run.summary.duration_s == 2.0 and run.summary.latency_stddev_ms is None
    assert [s.transactions for s in run.summary.scripts] == [2400, 1600]
    assert run.wall_s == pytest.approx(2.3) and run.client_cpu_s == pytest.approx(0.4)
    assert combined([one]) is one
    with pytest.raises(ValueError, match="no slices"):
        combined([])


def test_a_steps_observations_join_into_one() -> None:
    first = Observation(
        waits=Counter({"CPU": 3, "IO:WALSync": 1}),
        samples=4,
        stats={
            "database": {"xact_commit": 10, "blks_hit": 100},
            "wal": {"wal_bytes": 1000},
            "io": {"client backend": {"reads": 1}},
            "checkpoints": 0,
            "statements": [
                {"query": "select 1", "calls": 2, "total_ms": 1.0, "rows": 2,
                 "shared_blks_hit": 4, "shared_blks_read": 0, "mean_ms": 0.5},
            ],
        },
        sampler=SamplerCost(4, 0.01, 0.02, 0.25),
        wall_s=1.2,
    )  # fmt: skip
    second = Observation(
        waits=Counter({"CPU": 5}),
        samples=5,
        stats={
            "database": {"xact_commit": 30, "blks_hit": 300},
            "wal": {"wal_bytes": 3000},
            "checkpoints": 1,
            "statements": [
                {"query": "select 1", "calls": 6, "total_ms": 2.0, "rows": 6,
                 "shared_blks_hit": 12, "shared_blks_read": 1, "mean_ms": 0.3333},
                {"query": "select 2", "calls": 1, "total_ms": 9.0, "rows": 1,
                 "shared_blks_hit": 1, "shared_blks_read": 0, "mean_ms": 9.0},
            ],
        },
        sampler=SamplerCost(5, 0.02, None, 0.25),
        wall_s=1.3,
        problems=["x"],
    )  # fmt: skip
    joined = joined_observation([first, second])
    assert joined.waits == Counter({"CPU": 8, "IO:WALSync": 1}) and joined.samples == 9
    assert joined.stats["database"] == {"xact_commit": 40, "blks_hit": 400}
    assert joined.stats["wal"] == {"wal_bytes": 4000} and joined.stats["checkpoints"] == 1
    assert joined.stats["io"] == {"client backend": {"reads": 1}}
    by_query = {r["query"]: r for r in joined.stats["statements"]}
    assert by_query["select 1"]["calls"] == 8 and by_query["select 1"]["mean_ms"] == 0.375
    assert [r["query"] for r in joined.stats["statements"]] == ["select 2", "select 1"]
    assert joined.sampler is not None and joined.sampler.samples == 9
    assert joined.sampler.server_cpu_s is None  # one slice could not tell
    assert joined.problems == ["x"] and joined.wall_s == 2.5
    assert merged_stats([]) == {"checkpoints": 0}
