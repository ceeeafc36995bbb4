"""A run's per-second samples: stalls found the same way in every run."""

from pgopt.analysis.noise import contamination


def test_a_second_below_half_the_median_marks_the_run_disturbed() -> None:
    steady = [1000.0, 990.0, 1010.0, 1005.0, 995.0]
    assert contamination(steady) is None
    stalled = [1000.0, 990.0, 300.0, 1005.0, 995.0]
    reason = contamination(stalled)
    assert reason == ("second 3 ran at 300 tx/s, below half the run's median second (992 tx/s)")


def test_the_first_second_is_not_judged_and_few_seconds_cannot_be() -> None:
    # the first second, when clients connect, is left out
    assert contamination([10.0, 1000.0, 1000.0, 1000.0]) is None
    # two seconds after it are too few to judge
    assert contamination([1000.0, 1000.0, 10.0]) is None
    assert contamination([]) is None
