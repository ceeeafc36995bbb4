"""The wait sampler's rate: cheap enough for the workload, enough samples for the
why-line's 5-point moves (seeded simulation of a step's shares)."""

from __future__ import annotations

import numpy as np
import pytest

from pgopt.observe.sampler import MAX_RATE_HZ, MIN_RATE_HZ, interval_for


@pytest.mark.parametrize(
    ("run_s", "rate_hz"),
    [
        (None, MAX_RATE_HZ),  # length unknown: the top rate
        (2, MAX_RATE_HZ),
        (20, MAX_RATE_HZ),  # 150 a run would need 7.5 a second
        (30, 5.0),  # 150 a run
        (60, 2.5),
        (600, MIN_RATE_HZ),  # long runs keep at least 2 a second
    ],
)
def test_the_rate_follows_the_runs_length_within_its_bounds(
    run_s: float | None, rate_hz: float
) -> None:
    assert 1 / interval_for(run_s) == pytest.approx(rate_hz)
    assert MIN_RATE_HZ <= 1 / interval_for(run_s) <= MAX_RATE_HZ == 5.0


@pytest.mark.parametrize(("run_s", "bound"), [(20, 0.05), (30, 0.042)])
def test_a_default_step_bounds_a_share_as_finely_as_the_why_line_moves(
    run_s: float, bound: float
) -> None:
    """4 rounds of one backend (the least a step sees) at a true share of 50%, the
    binomial worst case: 95% of steps measure the share within `bound`."""
    samples_per_step = 4 * round(run_s / interval_for(run_s))
    rng = np.random.default_rng(23)
    shares = rng.binomial(samples_per_step, 0.5, size=20_000) / samples_per_step
    assert np.quantile(np.abs(shares - 0.5), 0.95) <= bound
