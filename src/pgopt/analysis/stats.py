"""Descriptive statistics of one step's runs: median, spread, an interval (pure).

Comparisons between steps and their verdicts live in `verdicts`; this module only
describes a set of runs: the median users read, the run-to-run coefficient of
variation, and a 95% Student-t interval of the geometric mean (runs vary by
factors, so the log scale is the natural one).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from scipy import special

CV_WARNING = 0.10
KNEE_SHARE = 0.9


def median(samples: Sequence[float]) -> float:
    if not samples:
        raise ValueError("no samples")
    return float(statistics.median(samples))


def geometric_interval(samples: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Student-t interval of the geometric mean; (min, max) of a single run or of
    values that are not all positive."""
    if len(samples) < 2 or min(samples) <= 0:
        return float(min(samples)), float(max(samples))
    logs = [math.log(v) for v in samples]
    mean, sd = statistics.fmean(logs), statistics.stdev(logs)
    half = float(special.stdtrit(len(logs) - 1, 1 - (1 - level) / 2)) * sd / math.sqrt(len(logs))
    return math.exp(mean - half), math.exp(mean + half)


def coefficient_of_variation(samples: Sequence[float]) -> float | None:
    if len(samples) < 2:
        return None
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / mean if mean else None


def best_and_knee(points: Sequence[tuple[int, float]]) -> tuple[int, int]:
    """For (clients, throughput) points: the best client count, and the knee, the
    fewest clients that reach 90% of the best throughput."""
    best_clients, best = max(points, key=lambda p: p[1])
    knee = min(c for c, v in points if v >= KNEE_SHARE * best)
    return best_clients, knee
