"""Which steps a lab compares, paired by round or not, as one family."""

import pytest

from pgopt.analysis.comparisons import (
    Pair,
    Sample,
    baseline_of,
    decide_family,
    evidence,
    lab_pairs,
    metric_pairs,
    reference_of,
)
from pgopt.analysis.verdicts import Rule
from pgopt.model.verdict import Verdict

PARENTS = {"base": None, "async": "base", "prep": "async", "sweep": "base"}


def test_a_step_is_compared_with_its_nearest_ancestor_that_ran() -> None:
    order = ["base", "async", "prep", "sweep"]
    assert reference_of("prep", order, PARENTS) == "async"
    assert reference_of("sweep", order, PARENTS) == "base"
    assert reference_of("prep", ["base", "prep"], PARENTS) == "base"  # async was skipped
    assert reference_of("base", order, PARENTS) is None


def test_each_pair_once_and_phases_against_the_same_phase() -> None:
    order = ["base", "async", "prep"]
    assert metric_pairs(order, PARENTS) == [
        Pair("base", "async"),
        Pair("async", "prep"),
        Pair("base", "prep"),
    ]
    phases = {"base": ["restore", "update"], "async": ["restore"], "prep": ["restore"]}
    pairs = lab_pairs(order, PARENTS, phases)
    assert Pair("base", "async", "restore") in pairs
    assert Pair("base", "async", "update") not in pairs  # async has no such phase
    assert len(pairs) == 5


def test_a_family_is_compared_only_within_itself() -> None:
    """replicas: the writes start a family of their own; comparing their rate with the
    reads' would only say that the workloads differ."""
    parents = {"reads": None, "spread": "reads", "writes": "reads", "sync": "writes"}
    order = ["reads", "spread", "writes", "sync"]
    starts = {"writes"}
    assert reference_of("writes", order, parents, starts) is None
    assert baseline_of("sync", order, parents, starts) == "writes"
    assert baseline_of("spread", order, parents, starts) == "reads"
    assert metric_pairs(order, parents, starts) == [Pair("reads", "spread"), Pair("writes", "sync")]


def samples(segment: int, values: list[float]) -> list[Sample]:
    return [Sample(segment, r, v) for r, v in enumerate(values, 1)]


def test_same_segment_pairs_by_round_other_segments_do_not() -> None:
    a = samples(0, [100.0, 110.0, 90.0, 105.0])
    b = samples(0, [102.0, 112.0, 92.0, 107.0])  # +2% in every round, whatever its level
    paired = evidence(a, b, alpha=0.05)
    assert paired is not None and paired.paired and paired.p_value < 0.01
    unpaired = evidence(a, samples(1, [102.0, 112.0, 92.0, 107.0]), alpha=0.05)
    assert unpaired is not None and not unpaired.paired and unpaired.p_value > 0.5
    assert evidence([], b, alpha=0.05) is None


def test_phase_seconds_are_better_lower_whatever_the_metric() -> None:
    runs = {
        ("base", None): samples(0, [100.0, 101.0, 99.0]),
        ("fast", None): samples(0, [200.0, 203.0, 197.0]),
        ("base", "load"): samples(0, [10.0, 10.1, 9.9]),
        ("fast", "load"): samples(0, [5.0, 5.05, 4.95]),
    }
    decisions = decide_family(
        [Pair("base", "fast"), Pair("base", "fast", "load")],
        lambda step, phase: runs[(step, phase)],
        higher_is_better=True,
        rule=Rule(),
    )
    assert decisions[Pair("base", "fast")].verdict is Verdict.FASTER
    assert decisions[Pair("base", "fast", "load")].verdict is Verdict.FASTER
    assert decisions[Pair("base", "fast", "load")].evidence.ratio == pytest.approx(0.5)
