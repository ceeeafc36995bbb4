"""Descriptive statistics and the verdict rule, checked against SciPy's own tests."""

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from pgopt.analysis import stats
from pgopt.analysis.verdicts import (
    Evidence,
    Rule,
    adjusted,
    decide,
    paired,
    sign_flip_p,
    unpaired,
    verdict,
)
from pgopt.model.verdict import Verdict

A = [100.0, 104.0, 98.0, 101.0, 103.0, 99.0]
B = [110.0, 113.0, 109.0, 112.0, 111.0, 108.0]


def test_median_cv_and_the_geometric_interval() -> None:
    assert stats.median([10.0, 12.0, 11.0]) == 11.0
    low, high = stats.geometric_interval(A)
    geomean = math.exp(np.mean(np.log(A)))
    assert low < geomean < high
    assert stats.geometric_interval([5.0]) == (5.0, 5.0)
    assert stats.coefficient_of_variation([5.0]) is None


def test_paired_comparison_is_the_t_test_of_the_log_ratios() -> None:
    e = paired(A, B)
    d = np.log(B) - np.log(A)
    assert e.ratio == pytest.approx(math.exp(d.mean()))
    assert e.p_value == pytest.approx(scipy_stats.ttest_rel(np.log(B), np.log(A)).pvalue)
    ci = scipy_stats.ttest_1samp(d, 0).confidence_interval(0.95)
    assert e.ci95 == pytest.approx((math.exp(ci.low), math.exp(ci.high)))
    assert e.rounds == 6 and e.paired


def test_unpaired_comparison_is_welchs_t_test_of_the_logs() -> None:
    e = unpaired(A, B[:4])
    expected = scipy_stats.ttest_ind(np.log(B[:4]), np.log(A), equal_var=False)
    assert e.p_value == pytest.approx(expected.pvalue)
    ci = expected.confidence_interval(0.95)
    assert e.ci95 == pytest.approx((math.exp(ci.low), math.exp(ci.high)))
    assert e.rounds == 4 and not e.paired


def test_sign_flip_test_is_scipys_exact_randomization_test() -> None:
    d = [0.03, -0.01, 0.02, 0.05, 0.01, -0.02, 0.04]
    ours = sign_flip_p(d)
    theirs = scipy_stats.permutation_test(
        (np.array(d),),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        n_resamples=10**6,
    ).pvalue
    assert ours == pytest.approx(theirs)


def test_benjamini_hochberg_matches_the_textbook() -> None:
    # ranks 1, 3, 2, 4 of 4: p * 4 / rank, then the running minimum from the largest
    expected = [0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5]
    assert adjusted([0.01, 0.04, 0.03, 0.5]) == pytest.approx(expected)
    assert adjusted([]) == []


def test_directional_verdicts_need_three_rounds() -> None:
    rule = Rule()
    assert verdict(paired(A[:1], B[:1]), higher_is_better=True, rule=rule) is Verdict.NOT_APPLICABLE
    assert verdict(paired(A[:2], B[:2]), higher_is_better=True, rule=rule) is Verdict.INCONCLUSIVE
    assert verdict(paired(A[:3], B[:3]), higher_is_better=True, rule=rule) is Verdict.FASTER
    # seconds: more is slower
    assert verdict(paired(A, B), higher_is_better=False, rule=rule) is Verdict.SLOWER


def test_one_wild_round_cannot_carry_a_verdict_from_six_rounds() -> None:
    # five rounds +5%, one round -0.1%: the t test says faster (p = 0.004), but 4 of
    # the 64 sign patterns reach the observed sum (p = 0.0625): not enough
    d = [0.05] * 5 + [-0.001]
    base = [100.0] * 6
    e = paired(base, [100.0 * math.exp(x) for x in d])
    assert e.p_value < 0.01 and e.sign_flip_p == pytest.approx(4 / 64)
    assert verdict(e, higher_is_better=True, rule=Rule()) is Verdict.INCONCLUSIVE


def test_no_change_needs_the_90_interval_inside_the_margin() -> None:
    same = [100.0, 101.0, 99.5, 100.2, 100.8, 99.9]
    close = [100.3, 100.9, 99.8, 100.0, 101.0, 100.1]
    e = paired(same, close)
    assert verdict(e, higher_is_better=True, rule=Rule(margin=0.03)) is Verdict.NO_CHANGE
    # the same evidence with a 0.1% margin is merely inconclusive, and says what it can see
    assert verdict(e, higher_is_better=True, rule=Rule(margin=0.001)) is Verdict.INCONCLUSIVE
    assert e.detectable is not None and 0 < e.detectable < 0.03


def test_the_family_adjustment_can_take_a_verdict_back() -> None:
    lone = Evidence(1.05, (1.001, 1.1), (1.01, 1.09), 0.04, None, 5, True, 0.02, 0.05)
    noise = Evidence(1.0, (0.9, 1.1), (0.92, 1.08), 0.9, None, 5, True, 0.05, 0.1)
    alone = decide([lone], [True], Rule())
    assert alone[0].verdict is Verdict.FASTER
    family = decide([lone, noise, noise, noise], [True] * 4, Rule())
    assert family[0].verdict is Verdict.INCONCLUSIVE and family[0].p_adjusted == pytest.approx(0.16)


def test_values_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        paired([1.0, 0.0], [1.0, 1.0])
