"""Which steps a lab compares, and their verdicts as one family (pure).

Every step is compared with the step it derives from (its `from`, or the step
before it; the nearest ancestor that ran) and with the baseline: the lab's first
step, or in a lab whose steps measure different workloads, the step that starts
the step's family (`baseline = true`), which is compared with nothing before it; labs timed by
phase also compare each phase with the same phase of the step it derives from.
Runs of two steps in the same segment shared rounds and are compared pair by
pair; runs in different segments are compared as independent samples. All of a
lab's comparisons form one family for the Benjamini-Hochberg step.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from ..lab.spec import Step
from ..model.outcomes import RunRecord, StepOutcome
from .verdicts import Decision, Evidence, Rule, decide, paired, unpaired


@dataclass(frozen=True)
class Sample:
    """One run's figure and the round it ran in."""

    segment: int
    round: int
    value: float


@dataclass(frozen=True)
class Pair:
    """B = `step` against A = `reference`, on the lab's metric or on one phase."""

    reference: str
    step: str
    phase: str | None = None


def reference_of(
    step: str,
    order: Sequence[str],
    parents: Mapping[str, str | None],
    starts: Collection[str] = (),
) -> str | None:
    """The step `step` is compared with, among the steps in `order` (those that ran, in
    lab order): its nearest ancestor that ran, else the step before it; None for the first
    step and for a step that starts a family of its own (`starts`)."""
    if step in starts:
        return None
    ran = set(order)
    parent = parents.get(step)
    while parent is not None and parent not in ran:
        parent = parents.get(parent)
    if parent is not None:
        return parent
    index = order.index(step)
    return order[index - 1] if index > 0 else None


def baseline_of(
    step: str,
    order: Sequence[str],
    parents: Mapping[str, str | None],
    starts: Collection[str] = (),
) -> str:
    """The baseline of `step`'s family: where its chain of references ends (the lab's
    first step, or the nearest step that starts a family)."""
    seen = step
    while (reference := reference_of(seen, order, parents, starts)) is not None:
        seen = reference
    return seen


def metric_pairs(
    order: Sequence[str], parents: Mapping[str, str | None], starts: Collection[str] = ()
) -> list[Pair]:
    """Each step against the step it derives from and against its family's baseline,
    once each; a step that starts a family is compared with nothing before it."""
    pairs: list[Pair] = []
    for step in order:
        reference = reference_of(step, order, parents, starts)
        if reference is None:
            continue
        baseline = baseline_of(step, order, parents, starts)
        pairs += [Pair(a, step) for a in dict.fromkeys((reference, baseline))]
    return pairs


def lab_pairs(
    order: Sequence[str],
    parents: Mapping[str, str | None],
    phases: Mapping[str, Sequence[str]],
    starts: Collection[str] = (),
) -> list[Pair]:
    """A lab's whole family: `metric_pairs`, then each timed phase of a step against the
    same phase of the step it derives from (`phases`: each step's timed phase names)."""
    pairs = metric_pairs(order, parents, starts)
    for step in order[1:]:
        reference = reference_of(step, order, parents, starts)
        if reference is None:
            continue
        shared = [p for p in phases.get(step, ()) if p in phases.get(reference, ())]
        pairs += [Pair(reference, step, phase) for phase in shared]
    return pairs


def evidence(a: Sequence[Sample], b: Sequence[Sample], *, alpha: float) -> Evidence | None:
    """B against A: paired by round when both ran in the same segment; None when a
    side has no runs."""
    if not a or not b:
        return None
    if {s.segment for s in a} == {s.segment for s in b} and len({s.segment for s in a}) == 1:
        by_round = {s.round: s.value for s in a}
        shared = [s for s in b if s.round in by_round]
        if shared:
            return paired(
                [by_round[s.round] for s in shared], [s.value for s in shared], alpha=alpha
            )
    return unpaired([s.value for s in a], [s.value for s in b], alpha=alpha)


SamplesOf = Callable[[str, str | None], Sequence[Sample]]


def decide_family(
    pairs: Sequence[Pair],
    samples_of: SamplesOf,
    *,
    higher_is_better: bool,
    rule: Rule,
) -> dict[Pair, Decision]:
    """Verdicts for `pairs`, Benjamini-Hochberg across all of them; a phase's seconds are
    better lower, whatever the lab's metric. Pairs with no evidence are left out."""
    found: list[tuple[Pair, Evidence]] = []
    for pair in pairs:
        e = evidence(
            samples_of(pair.reference, pair.phase),
            samples_of(pair.step, pair.phase),
            alpha=rule.alpha,
        )
        if e is not None:
            found.append((pair, e))
    decisions = decide(
        [e for _, e in found],
        [higher_is_better if p.phase is None else False for p, _ in found],
        rule,
    )
    return {pair: d for (pair, _), d in zip(found, decisions, strict=True)}


def run_samples(runs: Sequence[RunRecord], phase: str | None = None) -> list[Sample]:
    """The lab's metric of each run (or one phase's seconds), with its round."""
    if phase is None:
        return [Sample(r.segment, r.round, r.value) for r in runs]
    return [Sample(r.segment, r.round, s) for r in runs for n, s in r.phases if n == phase]


def lab_decisions(
    outcomes: Sequence[StepOutcome],
    steps: Sequence[Step],
    *,
    higher_is_better: bool,
    rule: Rule,
    only: Collection[str] | None = None,
) -> dict[Pair, Decision]:
    """The verdicts of a lab's comparisons from the runs so far (`only`: those whose
    step B is one of these, as a segment asks at a look)."""
    measured = {o.step.name: o for o in outcomes if o.runs}
    order = [s.name for s in steps if s.name in measured]
    phases = {name: [n for n, _ in o.runs[0].phases] for name, o in measured.items()}
    starts = {s.name for s in steps if s.baseline}
    pairs = lab_pairs(order, {s.name: s.parent for s in steps}, phases, starts)
    if only is not None:
        pairs = [p for p in pairs if p.step in only]
    return decide_family(
        pairs,
        lambda step, phase: run_samples(measured[step].runs, phase),
        higher_is_better=higher_is_better,
        rule=rule,
    )
