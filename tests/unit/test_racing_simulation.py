"""A race's error rates, power and cost, by seeded simulation (pure, no server).

The current best and K candidates run in rounds, each round in the plan's random
order (engine/plan.py's draw_rounds), every run with the log-scale noise of a
2-core machine (a 3% CV, a slow drift); at each sequential look the race's call
(analysis/racing.py) drops candidates and may name a winner, on the production
verdicts (sequential alpha, Benjamini-Hochberg across the race's candidates).

Bounds: a nominal rate plus three Monte-Carlo standard errors for the replications
(the test fails on a real defect, not on bad luck).
"""

from __future__ import annotations

import math

import numpy as np

from pgopt.analysis.racing import call
from pgopt.analysis.verdicts import Rule, decide, paired
from pgopt.engine.plan import draw_rounds
from pgopt.params import LOOKS

CV = 0.03
MARGIN = 0.03
REPLICATIONS = 600


def bound(rate: float, replications: int) -> float:
    return rate + 3 * math.sqrt(rate * (1 - rate) / replications)


def race(effects: dict[str, float], seed: int) -> tuple[str | None, int]:
    """One race of `effects` (candidate -> its true gain) against the current best:
    its winner, and the runs it took."""
    rng = np.random.default_rng(seed)
    values: dict[str, list[float]] = {name: [] for name in ("best", *effects)}
    alive = dict(effects)
    runs = 0
    rule = Rule.for_mode(sequential=True, margin=MARGIN)
    for planned in draw_rounds(seed, 0, tuple(values), LOOKS[-1]):
        for name in planned.order:
            if name != "best" and name not in alive:
                continue
            shift = math.log1p(alive.get(name, 0.0))
            drift = 0.002 * runs
            values[name].append(1000 * math.exp(shift + drift + rng.normal(0, CV)))
            runs += 1
        if planned.number not in LOOKS:
            continue
        names = list(alive)
        decisions = decide(
            [paired(values["best"][-len(values[n]) :], values[n]) for n in names],
            [True] * len(names),
            rule,
        )
        result = call(
            dict(zip(names, decisions, strict=True)), MARGIN, last=planned.number == LOOKS[-1]
        )
        for name in result.dropped:
            del alive[name]
        if result.over:
            return result.winner, runs
    raise AssertionError("the last look ends the race")


def test_candidates_that_do_nothing_win_at_most_the_alpha() -> None:
    wins = sum(
        race(dict.fromkeys("abcde", 0.0), seed)[0] is not None for seed in range(REPLICATIONS)
    )
    assert wins / REPLICATIONS <= bound(0.05, REPLICATIONS), wins


def test_a_real_gain_wins_and_the_rest_are_dropped_early() -> None:
    """One candidate 15% faster among four that do nothing: it wins nearly always, a
    do-nothing one almost never, and the race costs far fewer runs than running all
    five to the last look (at most 60% of those runs)."""
    effects = {"real": 0.15, "a": 0.0, "b": 0.0, "c": 0.0, "d": 0.0}
    outcomes = [race(effects, seed) for seed in range(REPLICATIONS)]
    winners = [w for w, _ in outcomes]
    assert winners.count("real") / REPLICATIONS >= 0.95
    wrong = sum(w not in (None, "real") for w in winners)
    assert wrong / REPLICATIONS <= bound(0.05, REPLICATIONS), wrong
    every_round = LOOKS[-1] * (1 + len(effects))
    assert np.mean([runs for _, runs in outcomes]) < 0.6 * every_round


def test_the_best_of_two_real_gains_wins() -> None:
    effects = {"small": 0.06, "large": 0.25, "none": 0.0}
    winners = [race(effects, seed)[0] for seed in range(REPLICATIONS)]
    assert winners.count("large") / REPLICATIONS >= 0.95


def test_a_gain_under_the_margin_is_rarely_kept() -> None:
    """A change 1% faster matters less than the 3% margin: kept only where chance made
    it look larger, rarely."""
    winners = [race({"tiny": 0.01}, seed)[0] for seed in range(REPLICATIONS)]
    assert winners.count("tiny") / REPLICATIONS <= 0.25
