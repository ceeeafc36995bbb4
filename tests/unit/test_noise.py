"""A run's per-second samples: the warm-up trimmed the same way, stalls found."""

import pytest

from pgopt.analysis.noise import contamination, trimmed_rate


def test_the_warm_up_seconds_are_taken_out_of_the_rate() -> None:
    # 5 seconds: a slow first second, then 1,000/s; pgbench's own figure mixes them
    per_second = [400.0, 1000.0, 1000.0, 1000.0]  # the last second is not printed
    transactions = 400 + 4 * 1000
    tps = transactions / 5.0
    assert trimmed_rate(transactions, tps, per_second, warmup_s=1) == pytest.approx(1000.0)
    assert trimmed_rate(transactions, tps, per_second, warmup_s=0) == tps


def test_too_short_a_run_keeps_pgbenchs_figure() -> None:
    assert trimmed_rate(100, 100.0, [100.0], warmup_s=1) == 100.0
    assert trimmed_rate(0, 0.0, [], warmup_s=1) == 0.0


def test_a_second_below_half_the_median_marks_the_run_disturbed() -> None:
    steady = [1000.0, 990.0, 1010.0, 1005.0, 995.0]
    assert contamination(steady, warmup_s=1) is None
    stalled = [1000.0, 990.0, 300.0, 1005.0, 995.0]
    reason = contamination(stalled, warmup_s=1)
    assert reason == ("second 3 ran at 300 tx/s, below half the run's median second (992 tx/s)")
    # the warm-up is not judged, and two seconds after it are too few to judge
    assert contamination([10.0, 1000.0, 1000.0, 1000.0], warmup_s=1) is None
    assert contamination([1000.0, 1000.0, 10.0], warmup_s=1) is None
    # without a warm-up, the first second (clients connecting) is still left out
    assert contamination([10.0, 1000.0, 1000.0, 1000.0], warmup_s=0) is None
