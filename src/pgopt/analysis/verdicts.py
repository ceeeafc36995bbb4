"""How pgopt decides whether a change made a difference: pure functions over run values.

The rule (../shared/VERDICTS.md, after Kalibera & Jones and Abedi & Brecht):

- Compare B with A on the log scale. When both ran in the same randomized rounds,
  each round gives d = ln(B) - ln(A) (a *paired* comparison); otherwise the two
  sets of runs are compared as independent samples (Welch). The estimate is
  exp(mean d), the geometric-mean ratio B/A, with a Student-t interval.
- Four verdicts: `faster` / `slower` when the test rejects "no difference" at the
  rule's alpha (after Benjamini-Hochberg across the lab's comparisons); `no-change`
  when the 90% interval lies within +-margin (equivalence by two one-sided tests);
  `inconclusive` otherwise, with the smallest change the run could have detected
  at 80% power. `n/a` when a side has a single run.
- No directional verdict below 3 rounds. From 6 rounds an exact sign-flip test
  (every sign pattern of the d's; valid under any drift because the order was
  random) must agree at 5%, so that one wild round cannot carry a verdict.
- Sequential looks (`--reps auto`) test at alpha 0.018 at 4, 6, 8 and 10 rounds,
  which keeps the overall false-verdict rate at 5%; a fixed count tests at 0.05.

Distributions come from SciPy; the property tests are seeded simulations
(tests/unit/test_verdict_simulation.py).
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

import numpy as np
from numpy.typing import NDArray
from scipy import special, stats

from ..model.result import Ratio
from ..model.verdict import Verdict

FIXED_ALPHA = 0.05
SEQUENTIAL_ALPHA = 0.018
DEFAULT_MARGIN = 0.03
MIN_ROUNDS = 3
SIGN_FLIP_FROM = 6
SIGN_FLIP_ALPHA = 0.05
EXACT_SIGN_FLIP_MAX = 16  # 65,536 sign patterns; beyond, a seeded sample of them
SIGN_FLIP_SAMPLES = 65_536
EQUIVALENCE_LEVEL = 0.90
POWER = 0.80


@dataclass(frozen=True)
class Rule:
    """The significance level of each look and the smallest change that matters."""

    alpha: float = FIXED_ALPHA
    margin: float = DEFAULT_MARGIN

    @classmethod
    def for_mode(cls, sequential: bool, margin: float = DEFAULT_MARGIN) -> Rule:
        return cls(SEQUENTIAL_ALPHA if sequential else FIXED_ALPHA, margin)


@dataclass(frozen=True)
class Evidence:
    """What the runs say about B/A, before a verdict is drawn from it."""

    ratio: float  # exp(mean d): the geometric-mean ratio B/A
    ci95: tuple[float, float]
    ci90: tuple[float, float]
    p_value: float  # two-sided t test of "no difference"
    sign_flip_p: float | None  # exact randomization test, paired and from 6 rounds
    rounds: int  # pairs, or the smaller side when unpaired
    paired: bool
    cv: float | None  # run-to-run noise of one run, on the log scale
    detectable: float | None  # smallest change detectable at 80% power, relative


def _logs(values: Sequence[float]) -> list[float]:
    if not values or not all(0 < v < math.inf for v in values):
        raise ValueError("ratios need positive, finite values")
    return [math.log(v) for v in values]


def _variance(values: list[float], mean: float) -> float:
    """Sample variance (n - 1); statistics.variance is exact but slow for simulations."""
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def _t_quantile(q: float, df: float) -> float:
    return float(special.stdtrit(df, q))


def _interval(mean: float, se: float, df: float, level: float) -> tuple[float, float]:
    half = _t_quantile(1 - (1 - level) / 2, df) * se
    return math.exp(mean - half), math.exp(mean + half)


def _p_value(mean: float, se: float, df: float) -> float:
    if se == 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * special.stdtr(df, -abs(mean / se)))


def _detectable(se: float, df: float, alpha: float) -> float:
    shift = (_t_quantile(1 - alpha / 2, df) + _t_quantile(POWER, df)) * se
    return math.expm1(shift)


def _evidence(
    mean: float, se: float, df: float, rounds: int, paired: bool, cv: float, alpha: float
) -> Evidence:
    return Evidence(
        ratio=math.exp(mean),
        ci95=_interval(mean, se, df, 0.95),
        ci90=_interval(mean, se, df, EQUIVALENCE_LEVEL),
        p_value=_p_value(mean, se, df),
        sign_flip_p=None,
        rounds=rounds,
        paired=paired,
        cv=cv,
        detectable=_detectable(se, df, alpha),
    )


def _single(ratio: float, rounds: int, paired: bool) -> Evidence:
    return Evidence(ratio, (ratio, ratio), (ratio, ratio), 1.0, None, rounds, paired, None, None)


def paired(a: Sequence[float], b: Sequence[float], *, alpha: float = FIXED_ALPHA) -> Evidence:
    """B against A from runs made in the same rounds: a[i] and b[i] share round i."""
    if len(a) != len(b):
        raise ValueError("paired comparison needs one value of each side per round")
    d = [y - x for x, y in zip(_logs(a), _logs(b), strict=True)]
    n = len(d)
    mean = statistics.fmean(d)
    if n < 2:
        return _single(math.exp(mean), n, True)
    sd = math.sqrt(_variance(d, mean))
    evidence = _evidence(mean, sd / math.sqrt(n), n - 1, n, True, sd / math.sqrt(2), alpha)
    if n < SIGN_FLIP_FROM:
        return evidence
    return replace(evidence, sign_flip_p=sign_flip_p(d))


def unpaired(a: Sequence[float], b: Sequence[float], *, alpha: float = FIXED_ALPHA) -> Evidence:
    """B against A from runs not made in shared rounds (another segment, another run):
    Welch's t on the logs."""
    la, lb = _logs(a), _logs(b)
    na, nb = len(la), len(lb)
    mean_a, mean_b = statistics.fmean(la), statistics.fmean(lb)
    mean = mean_b - mean_a
    rounds = min(na, nb)
    if rounds < 2:
        return _single(math.exp(mean), rounds, False)
    var_a, var_b = _variance(la, mean_a), _variance(lb, mean_b)
    va, vb = var_a / na, var_b / nb
    se = math.sqrt(va + vb)
    if se == 0:
        df = float(na + nb - 2)
    else:
        df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    pooled = math.sqrt(((na - 1) * var_a + (nb - 1) * var_b) / (na + nb - 2))
    return _evidence(mean, se, df, rounds, False, pooled, alpha)


@cache
def _sign_patterns(n: int) -> NDArray[np.int8]:
    return np.array(list(itertools.product((1, -1), repeat=n)), dtype=np.int8)


def sign_flip_p(d: Sequence[float]) -> float:
    """Two-sided p of the randomization test that flips the sign of each round's
    difference: exact over all 2^n patterns up to 16 rounds, a seeded sample beyond."""
    n = len(d)
    if n <= EXACT_SIGN_FLIP_MAX:
        patterns = _sign_patterns(n)
    else:
        rng = np.random.default_rng(n)
        patterns = rng.choice(np.array([1, -1], dtype=np.int8), size=(SIGN_FLIP_SAMPLES, n))
        patterns[0] = 1  # the observed pattern counts, so p is never 0
    observed = abs(math.fsum(d))
    sums = np.abs(patterns @ np.asarray(d, dtype=float))
    return float(np.mean(sums >= observed * (1 - 1e-9) - 1e-12))


def adjusted(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values: rejecting where adjusted p <= q keeps the
    expected share of false verdicts among the lab's verdicts at q."""
    if not p_values:
        return []
    return [float(p) for p in stats.false_discovery_control(list(p_values), method="bh")]


def verdict(
    evidence: Evidence,
    *,
    higher_is_better: bool,
    rule: Rule,
    p_adjusted: float | None = None,
) -> Verdict:
    """The verdict for B against A; `p_adjusted` is the comparison's p after the lab-wide
    Benjamini-Hochberg step (the raw p when it stands alone)."""
    if evidence.rounds < 2:
        return Verdict.NOT_APPLICABLE
    if evidence.rounds < MIN_ROUNDS:
        return Verdict.INCONCLUSIVE
    p = evidence.p_value if p_adjusted is None else p_adjusted
    robust = evidence.sign_flip_p is None or evidence.sign_flip_p <= SIGN_FLIP_ALPHA
    if p <= rule.alpha and robust and evidence.ratio != 1.0:
        return Verdict.FASTER if (evidence.ratio > 1) == higher_is_better else Verdict.SLOWER
    low, high = evidence.ci90
    if 1 - rule.margin <= low and high <= 1 + rule.margin:
        return Verdict.NO_CHANGE
    return Verdict.INCONCLUSIVE


@dataclass(frozen=True)
class Decision:
    """One comparison's verdict within its family of comparisons."""

    evidence: Evidence
    verdict: Verdict
    p_adjusted: float | None  # None: too few rounds to be tested


def decide(
    evidences: Sequence[Evidence], higher_is_better: Sequence[bool], rule: Rule
) -> list[Decision]:
    """Verdicts for a family of comparisons, Benjamini-Hochberg across those with
    enough rounds to be tested."""
    tested = [i for i, e in enumerate(evidences) if e.rounds >= MIN_ROUNDS]
    p_adj = dict(zip(tested, adjusted([evidences[i].p_value for i in tested]), strict=True))
    return [
        Decision(
            e,
            verdict(e, higher_is_better=h, rule=rule, p_adjusted=p_adj.get(i)),
            p_adj.get(i),
        )
        for i, (e, h) in enumerate(zip(evidences, higher_is_better, strict=True))
    ]


def ratio_of(decision: Decision) -> Ratio:
    """The result's record of a comparison: its estimate, the evidence, the verdict."""
    e = decision.evidence
    return Ratio(
        median=e.ratio,
        ci95=e.ci95,
        ci90=e.ci90,
        rounds=e.rounds,
        paired=e.paired,
        p=e.p_value,
        p_adjusted=decision.p_adjusted,
        sign_flip_p=e.sign_flip_p,
        cv=e.cv,
        detectable=e.detectable,
        verdict=decision.verdict,
    )
