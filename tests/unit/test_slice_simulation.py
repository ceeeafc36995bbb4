"""Interleaved slices by seeded simulation (pure, no server): they keep the verdict
rule's error rate and they narrow its interval where the machine drifts.

The simulated machine is the one docs/method.md measured: its throughput each
second wanders on the log scale (an AR(1) series, 12% sd, 0.69 from one second
to the next), and a second model adds a steady linear drift. Rounds run as the
engine runs them: the plan's random order, then either whole runs of 10 s each
or 10 slices of 1 s in the turns engine/plan.py gives (A B, B A, ...), with the
rounds' preparation between them; the verdicts come from the production code.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy.signal import lfilter

from pgopt.analysis.verdicts import Rule, paired, verdict
from pgopt.engine.plan import draw_rounds, slice_orders
from pgopt.model.verdict import Verdict
from pgopt.params import LOOKS

SECONDS = 10  # measured a side a round
GAP = 3  # seconds of preparation between rounds
SD, PHI = 0.12, 0.69
REPLICATIONS = 600
Machine = Callable[[np.random.Generator, int], np.ndarray]


def wandering(rng: np.random.Generator, seconds: int) -> np.ndarray:
    shocks = rng.normal(0, SD * math.sqrt(1 - PHI**2), seconds)
    return np.asarray(lfilter([1.0], [1.0, -PHI], shocks))


MACHINES: dict[str, Machine] = {
    "wandering": wandering,
    "wandering and drifting": lambda rng, t: wandering(rng, t) + 0.002 * np.arange(t),
}


def bound(rate: float, replications: int) -> float:
    return rate + 3 * math.sqrt(rate * (1 - rate) / replications)


def simulate(
    machine: Machine, sliced: bool, effect: float, replication: int, rng: np.random.Generator
) -> tuple[list[float], list[float]]:
    """A and B over LOOKS[-1] rounds; B is `effect` faster."""
    rounds = draw_rounds(replication, 0, ("A", "B"), LOOKS[-1])
    z = machine(rng, len(rounds) * (2 * SECONDS + GAP))
    values: dict[str, list[float]] = {"A": [], "B": []}
    t = 0
    for planned in rounds:
        t += GAP
        turns = slice_orders(planned.order, SECONDS) if sliced else [planned.order]
        width = 1 if sliced else SECONDS
        seconds: dict[str, list[float]] = {"A": [], "B": []}
        for turn in turns:
            for name in turn:
                seconds[name] += list(z[t : t + width])
                t += width
        for name in ("A", "B"):
            shift = math.log1p(effect) if name == "B" else 0.0
            values[name].append(1000 * math.exp(shift) * float(np.mean(np.exp(seconds[name]))))
    return values["A"], values["B"]


def sequential(
    machine: Machine, sliced: bool, effect: float, seed: int
) -> tuple[dict[Verdict, float], float]:
    """Verdict rates with looks after 4, 6, 8, 10 rounds, and the median 90% half-width
    at the last look."""
    rng = np.random.default_rng(seed)
    rule = Rule.for_mode(sequential=True)
    counts = dict.fromkeys(Verdict, 0)
    widths = []
    for i in range(REPLICATIONS):
        a, b = simulate(machine, sliced, effect, i, rng)
        for look in LOOKS:
            evidence = paired(a[:look], b[:look], alpha=rule.alpha)
            found = verdict(evidence, higher_is_better=True, rule=rule)
            if found.decided:
                break
        counts[found] += 1
        low, high = paired(a, b, alpha=rule.alpha).ci90
        widths.append(math.expm1((math.log(high) - math.log(low)) / 2))
    return {k: v / REPLICATIONS for k, v in counts.items()}, float(np.median(widths))


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("sliced", [False, True], ids=["whole", "sliced"])
def test_identical_steps_get_at_most_5_percent_directional_verdicts(
    machine: str, sliced: bool
) -> None:
    rates, _ = sequential(MACHINES[machine], sliced, 0.0, seed=3)
    assert rates[Verdict.FASTER] + rates[Verdict.SLOWER] <= bound(0.05, REPLICATIONS), rates


def test_slices_narrow_the_interval_where_the_machine_wanders() -> None:
    whole_rates, whole = sequential(MACHINES["wandering"], False, 0.0, seed=5)
    sliced_rates, sliced = sequential(MACHINES["wandering"], True, 0.0, seed=5)
    assert sliced < whole / 2, (sliced, whole)
    # so identical steps are called what they are, where whole runs almost never are
    # (on this model, a little noisier than the machine it was measured on: the real
    # counts are bench/no_change.py's)
    assert sliced_rates[Verdict.NO_CHANGE] >= 0.7 and whole_rates[Verdict.NO_CHANGE] <= 0.05


def test_slices_still_find_a_5_percent_change() -> None:
    rates, _ = sequential(MACHINES["wandering"], True, -0.05, seed=7)
    assert rates[Verdict.SLOWER] >= 0.80 and rates[Verdict.FASTER] == 0.0
    assert rates[Verdict.NO_CHANGE] <= 0.05  # equivalence beyond the margin: rare
