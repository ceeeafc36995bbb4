"""`tune --measure` names a winner only on a decided verdict (tune/choice.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pgopt.model.result import LabResult, Ratio
from pgopt.model.verdict import Verdict
from pgopt.store import load_result
from pgopt.tune.choice import choose

from .test_golden import RESULTS


def compared(pgopt_vs_pgtune: Verdict, *, slower_than_defaults: tuple[str, ...] = ()) -> LabResult:
    """A comparison of defaults, pgtune and pgopt (a real result's records, renamed)."""
    result = load_result(RESULTS / "smoke-c")
    base, second, third = result.steps
    ratio = Ratio(1.01, (0.86, 1.17), rounds=3, detectable=0.17)

    def vs_defaults(name: str) -> Verdict:
        return Verdict.SLOWER if name in slower_than_defaults else Verdict.INCONCLUSIVE

    steps = (
        replace(base, name="defaults"),
        replace(second, name="pgtune", verdict_vs_baseline=vs_defaults("pgtune")),
        replace(
            third,
            name="pgopt",
            ratio_vs_previous=ratio,
            verdict_vs_previous=pgopt_vs_pgtune,
            verdict_vs_baseline=vs_defaults("pgopt"),
            compared_with="pgtune",
        ),
    )
    return replace(result, steps=steps)


@pytest.mark.parametrize(("verdict", "winner"), [("faster", "pgopt"), ("slower", "pgtune")])
def test_a_decided_verdict_names_the_winner(verdict: str, winner: str) -> None:
    choice = choose(compared(Verdict(verdict)))
    assert choice.winner == winner and choice.held == winner
    assert choice.why.startswith(f"{winner} won (pgopt against pgtune: {verdict}")


@pytest.mark.parametrize("verdict", ["inconclusive", "no-change"])
def test_without_a_decided_verdict_no_profile_wins(verdict: str) -> None:
    choice = choose(compared(Verdict(verdict)))
    assert choice.winner is None
    assert "pgopt won" not in choice.why and "pgtune won" not in choice.why
    assert choice.why.startswith("no profile won")
    if verdict == "inconclusive":
        assert "could detect ≥17%" in choice.why
    assert choice.held == "pgopt" and "not shown better than pgtune's" in choice.why


def test_what_tune_conf_holds_without_a_winner() -> None:
    named = choose(compared(Verdict.INCONCLUSIVE), named="pgtune")
    assert named.winner is None and named.held == "pgtune" and "as named" in named.why
    pgopt_slower = choose(compared(Verdict.INCONCLUSIVE, slower_than_defaults=("pgopt",)))
    assert pgopt_slower.held == "pgtune"
    both = choose(compared(Verdict.INCONCLUSIVE, slower_than_defaults=("pgopt", "pgtune")))
    assert both.held is None and "sets nothing" in both.why
