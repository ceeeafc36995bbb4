"""Statistics for benchmark samples: medians, bootstrap intervals, ratios, verdicts.

Pure functions over lists of floats, seeded for reproducibility. A change is
called `faster` or `slower` only when the 95% interval of the ratio of medians
excludes 1; otherwise it is `no-change`. With a single run on either side there
is no interval to speak of, and the verdict is `n/a`.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95
CV_WARNING = 0.10

FASTER, SLOWER, NO_CHANGE, NOT_APPLICABLE = "faster", "slower", "no-change", "n/a"


@dataclass(frozen=True)
class Interval:
    median: float
    low: float
    high: float
    supports_verdict: bool = True  # False when a side had a single run

    def as_dict(self) -> dict[str, object]:
        return {"median": self.median, "ci95": [self.low, self.high]}

    def excludes(self, value: float) -> bool:
        return value < self.low or value > self.high


def median(samples: Sequence[float]) -> float:
    if not samples:
        raise ValueError("no samples")
    return float(statistics.median(samples))


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _percentile_interval(values: list[float]) -> tuple[float, float]:
    values.sort()
    alpha = (1 - CONFIDENCE) / 2
    return _quantile(values, alpha), _quantile(values, 1 - alpha)


def bootstrap_median(samples: Sequence[float], *, seed: int = 0) -> Interval:
    """Median and a percentile-bootstrap 95% interval of the median."""
    m = median(samples)
    if len(samples) == 1:
        return Interval(m, m, m)
    rng = random.Random(seed)
    n = len(samples)
    meds = [median(rng.choices(samples, k=n)) for _ in range(BOOTSTRAP_RESAMPLES)]
    low, high = _percentile_interval(meds)
    return Interval(m, low, high)


def bootstrap_ratio(
    numerator: Sequence[float], denominator: Sequence[float], *, seed: int = 0
) -> Interval:
    """Ratio of medians numerator/denominator with a 95% bootstrap interval.

    Each resample draws both groups independently with replacement.
    """
    base = median(denominator)
    if base == 0:
        raise ValueError("ratio against a zero median")
    ratio = median(numerator) / base
    if len(numerator) == 1 and len(denominator) == 1:
        return Interval(ratio, ratio, ratio, supports_verdict=False)
    rng = random.Random(seed)
    ratios: list[float] = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        d = median(rng.choices(denominator, k=len(denominator)))
        n = median(rng.choices(numerator, k=len(numerator)))
        if d != 0:
            ratios.append(n / d)
    low, high = _percentile_interval(ratios)
    enough = len(numerator) > 1 and len(denominator) > 1
    return Interval(ratio, low, high, supports_verdict=enough)


def verdict(ratio: Interval, *, higher_is_better: bool) -> str:
    """`faster`/`slower` only when the interval excludes 1; else `no-change`;
    `n/a` when a side had a single run."""
    if not ratio.supports_verdict:
        return NOT_APPLICABLE
    if not ratio.excludes(1.0):
        return NO_CHANGE
    better = ratio.low > 1.0 if higher_is_better else ratio.high < 1.0
    return FASTER if better else SLOWER


def coefficient_of_variation(samples: Sequence[float]) -> float | None:
    if len(samples) < 2:
        return None
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / mean if mean else None


KNEE_SHARE = 0.9


def best_and_knee(points: Sequence[tuple[int, float]]) -> tuple[int, int]:
    """For (clients, throughput) points: the best client count, and the knee, the
    fewest clients that reach 90% of the best throughput."""
    best_clients, best = max(points, key=lambda p: p[1])
    knee = min(c for c, v in points if v >= KNEE_SHARE * best)
    return best_clients, knee
