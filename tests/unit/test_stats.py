"""Statistics: medians, bootstrap intervals, ratios and the verdict rule."""

import random

import pytest

from pgopt import stats


def test_median_and_interval_contain_the_median() -> None:
    iv = stats.bootstrap_median([10.0, 12.0, 11.0, 13.0, 9.0], seed=1)
    assert iv.median == 11.0
    assert iv.low <= iv.median <= iv.high
    assert iv.low >= 9.0 and iv.high <= 13.0


def test_single_sample_has_a_degenerate_interval() -> None:
    iv = stats.bootstrap_median([5.0])
    assert (iv.low, iv.median, iv.high) == (5.0, 5.0, 5.0)


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    data = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert stats.bootstrap_median(data, seed=7) == stats.bootstrap_median(data, seed=7)


def test_ratio_of_medians() -> None:
    r = stats.bootstrap_ratio([200.0, 210.0, 190.0], [100.0, 105.0, 95.0], seed=3)
    assert r.median == pytest.approx(2.0)
    assert r.low > 1.5 and r.high < 2.5


def test_verdicts_follow_the_interval() -> None:
    assert stats.verdict(stats.Interval(2.0, 1.8, 2.2), higher_is_better=True) == "faster"
    assert stats.verdict(stats.Interval(0.5, 0.4, 0.6), higher_is_better=True) == "slower"
    assert stats.verdict(stats.Interval(1.05, 0.95, 1.2), higher_is_better=True) == "no-change"
    # seconds: lower is better
    assert stats.verdict(stats.Interval(0.6, 0.5, 0.7), higher_is_better=False) == "faster"
    assert stats.verdict(stats.Interval(1.6, 1.5, 1.7), higher_is_better=False) == "slower"


def test_a_single_run_on_either_side_gives_no_verdict() -> None:
    # twice as fast, but one run against one (or against three) is no evidence of it
    one_each = stats.bootstrap_ratio([200.0], [100.0])
    assert one_each.median == 2.0
    assert stats.verdict(one_each, higher_is_better=True) == "n/a"
    one_side = stats.bootstrap_ratio([200.0], [99.0, 100.0, 101.0])
    assert stats.verdict(one_side, higher_is_better=True) == "n/a"
    enough = stats.bootstrap_ratio([199.0, 200.0], [99.0, 100.0, 101.0])
    assert stats.verdict(enough, higher_is_better=True) == "faster"


def test_a_a_comparison_is_no_change_in_19_of_20_simulations() -> None:
    """Two steps with identical settings: 5 noisy reps each, 20 seeded simulations."""
    rng = random.Random(2026)
    no_change = 0
    for sim in range(20):
        a = [rng.gauss(1000, 50) for _ in range(5)]
        b = [rng.gauss(1000, 50) for _ in range(5)]
        ratio = stats.bootstrap_ratio(b, a, seed=sim)
        no_change += stats.verdict(ratio, higher_is_better=True) == "no-change"
    assert no_change >= 19


def test_a_real_difference_is_called() -> None:
    """Twice as fast with 5% noise must be `faster` in every simulation."""
    rng = random.Random(7)
    for sim in range(20):
        a = [rng.gauss(1000, 50) for _ in range(5)]
        b = [rng.gauss(2000, 100) for _ in range(5)]
        assert (
            stats.verdict(stats.bootstrap_ratio(b, a, seed=sim), higher_is_better=True) == "faster"
        )


def test_coefficient_of_variation() -> None:
    assert stats.coefficient_of_variation([1.0]) is None
    assert stats.coefficient_of_variation([10.0, 10.0, 10.0]) == 0
    cv = stats.coefficient_of_variation([90.0, 100.0, 110.0])
    assert cv == pytest.approx(0.1)


def test_best_and_knee_of_a_sweep() -> None:
    points = [(1, 100.0), (2, 190.0), (4, 370.0), (8, 400.0), (16, 395.0), (32, 300.0)]
    assert stats.best_and_knee(points) == (8, 4)
    assert stats.best_and_knee([(1, 5.0)]) == (1, 1)
