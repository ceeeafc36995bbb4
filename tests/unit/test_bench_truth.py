"""bench/truth_clients.py: how far pgopt's ratio is from the application's own, the
measure bench/replay_truth.py reports per case (pure)."""

from __future__ import annotations

import math

import pytest
from bench.truth_clients import agreement


@pytest.mark.parametrize(
    ("application", "pgopt", "within", "overlap"),
    [
        # issue 56's idle source: the application x1.24, pgopt x2.73
        ((1.24, (0.68, 2.26)), (2.73, (2.06, 3.63)), False, True),
        # its busy source, synchronous_commit off: both about x1.4
        ((1.45, (1.31, 1.61)), (1.41, (1.22, 1.62)), True, True),
        # its write-heavy case: the direction right, the size 14% low, apart
        ((2.27, (2.09, 2.46)), (1.95, (1.72, 2.05)), False, False),
    ],
)
def test_distance_within_and_overlap(
    application: tuple[float, tuple[float, float]],
    pgopt: tuple[float, tuple[float, float]],
    within: bool,
    overlap: bool,
) -> None:
    a = {"ratio": application[0], "ci95": list(application[1])}
    p = {"ratio": pgopt[0], "ci95": list(pgopt[1])}
    found = agreement(a, p)
    assert found["distance"] == round(abs(math.log(pgopt[0] / application[0])), 3)
    assert (found["within"], found["overlap"]) == (within, overlap)
