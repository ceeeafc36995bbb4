"""Two stored runs of one lab side by side: B's median over A's, step by step (pure;
terminal.py draws its table).

The comparison is computed from the two stored results alone,
with the verdict rule of a run; the runs of two separate lab runs share no
rounds, so each step is compared as two independent samples (Welch's t on the
logs), Benjamini-Hochberg across the steps. Runs that differ in
parameters, server or machine are compared anyway, with the differences listed,
because that is often the question ("did PostgreSQL 18 help?").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.stats import median
from ..analysis.verdicts import (
    DEFAULT_MARGIN,
    FIXED_ALPHA,
    Decision,
    Rule,
    decide,
    unpaired,
)
from ..errors import UsageError
from ..model.result import LabResult
from ..model.verdict import Verdict
from .fields import server_versions


@dataclass(frozen=True)
class StepComparison:
    name: str
    a_median: float
    b_median: float
    decision: Decision | None  # None when a side has no positive figures to compare

    @property
    def verdict(self) -> str:
        return str(self.decision.verdict) if self.decision else str(Verdict.NOT_APPLICABLE)


@dataclass(frozen=True)
class Comparison:
    lab: str
    unit: str
    higher_is_better: bool
    steps: tuple[StepComparison, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    differences: tuple[str, ...]
    margin: float


def compare_results(a: LabResult, b: LabResult, *, margin: float | None = None) -> Comparison:
    """Compare run B against run A; both must be runs of the same lab."""
    if a.lab != b.lab:
        raise UsageError(f"cannot compare runs of different labs: {a.lab} and {b.lab}")
    higher = a.metric.higher_is_better
    if margin is None:
        margin = b.verdicts.margin if b.verdicts else DEFAULT_MARGIN
    rule = Rule(FIXED_ALPHA, margin)
    b_steps = {s.name: s for s in b.steps}
    a_names = [s.name for s in a.steps]
    shared = [s for s in a.steps if s.name in b_steps]
    samples = [
        (list(step.metric.samples), list(b_steps[step.name].metric.samples)) for step in shared
    ]
    comparable = [i for i, (xa, xb) in enumerate(samples) if min(xa + xb) > 0]
    decisions = decide(
        [unpaired(*samples[i], alpha=rule.alpha) for i in comparable],
        [higher] * len(comparable),
        rule,
    )
    by_index = dict(zip(comparable, decisions, strict=True))
    compared = [
        StepComparison(
            name=step.name,
            a_median=median(xa),
            b_median=median(xb),
            decision=by_index.get(i),
        )
        for i, (step, (xa, xb)) in enumerate(zip(shared, samples, strict=True))
    ]
    return Comparison(
        lab=a.lab,
        unit=a.metric.unit,
        higher_is_better=higher,
        steps=tuple(compared),
        only_a=tuple(n for n in a_names if n not in b_steps),
        only_b=tuple(n for n in b_steps if n not in a_names),
        differences=tuple(_differences(a, b)),
        margin=margin,
    )


def _context(result: LabResult, section: str) -> dict[str, object]:
    if section == "metric":
        return {"unit": result.metric.unit}
    context: dict[str, object] = getattr(result, section)
    return context


_CONTEXT = (
    *(("params", key) for key in ("quick", "scale", "duration_s", "reps", "clients")),
    ("target", "kind"),
    ("target", "server_version"),
    ("machine", "cpus"),
    ("metric", "unit"),
)


def _differences(a: LabResult, b: LabResult) -> list[str]:
    """What else differs between the runs, so that a ratio is read with it in mind (the
    scale only where the data follows it: an A/B's copy has none)."""
    out = []
    versions = server_versions(a.target), server_versions(b.target)
    if versions[0] != versions[1] and (a.target.get("servers") or b.target.get("servers")):
        out.append(f"PostgreSQL {versions[0]} vs {versions[1]}")
    scaled = a.params.get("scaled", True) or b.params.get("scaled", True)
    for section, key in _CONTEXT:
        if key == "scale" and not scaled:
            continue
        va, vb = _context(a, section).get(key), _context(b, section).get(key)
        if va != vb:
            out.append(f"{key} {va} vs {vb}")
    return out


def comparison_notes(comparison: Comparison) -> list[str]:
    """Plain lines to print under the table: steps not in both, other differences."""
    notes = []
    if comparison.only_a:
        notes.append("only in A: " + ", ".join(comparison.only_a))
    if comparison.only_b:
        notes.append("only in B: " + ", ".join(comparison.only_b))
    if comparison.differences:
        notes.append("the runs differ in: " + "; ".join(comparison.differences))
    return notes
