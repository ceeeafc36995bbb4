"""Checks and facts: SQL that must hold after a step or a run, and numbers measured
by SQL after a step (correlation, blocks per query), under the step's settings."""

from __future__ import annotations

from ..analysis.stats import median
from ..lab.spec import Check, Lab, Step
from ..model.outcomes import CheckOutcome, RunRecord, StepOutcome
from .context import RunContext


def run_checks(ctx: RunContext, step: Step, after: str) -> list[CheckOutcome]:
    """The lab's checks that run after each `after` ('step' or 'run')."""
    return [_check(ctx, step, c) for c in ctx.lab.checks if c.after == after]


def _check(ctx: RunContext, step: Step, check: Check) -> CheckOutcome:
    value = ctx.psql().value(check.sql, ctx.step_variables(step), what=f"check '{check.name}'")
    if check.expect == "same":
        return CheckOutcome(check.name, True, "", value)
    passed = value.lower() in ("t", "true")
    return CheckOutcome(check.name, passed, "" if passed else f"returned {value}", value)


def measure_facts(ctx: RunContext, step: Step) -> dict[str, str]:
    return {
        fact.name: ctx.psql().value(fact.sql, ctx.step_variables(step), what=f"fact '{fact.name}'")
        for fact in step.facts
    }


def facts_over_runs(runs: list[RunRecord]) -> dict[str, str]:
    """Each fact's median over the runs when every run gave a number, else the
    last run's value."""
    out: dict[str, str] = {}
    for name in runs[-1].facts if runs else {}:
        values = [r.facts.get(name, "") for r in runs]
        try:
            numbers = [float(v) for v in values]
        except ValueError:
            out[name] = values[-1]
            continue
        middle = median(numbers)
        out[name] = str(int(middle)) if middle.is_integer() else f"{middle:.6g}"
    return out


def record_step_checks(ctx: RunContext, step: Step, outcome: StepOutcome) -> None:
    """After a step's last round: its checks, that no transaction failed, its facts."""
    outcome.checks.extend(run_checks(ctx, step, "step"))
    if step.scripts and not step.phases:
        failed = sum(r.pgbench.summary.failed for r in outcome.runs if r.pgbench)
        outcome.checks.append(
            CheckOutcome(
                "no transaction failed",
                failed == 0,
                "" if failed == 0 else f"{failed} failed transactions",
            )
        )
    # what each run measured (a cluster's nodes; a fresh step's facts, since its data
    # lives only until the next run), then the step's facts on the data it leaves
    outcome.facts.update(facts_over_runs(outcome.runs))
    if not step.fresh:
        outcome.facts.update(measure_facts(ctx, step))
    outcome.fact_units.update({f.name: f.unit for f in step.facts if f.unit})


def compare_same_checks(lab: Lab, outcomes: list[StepOutcome]) -> None:
    """`expect = same` checks pass only if every step saw the first step's value."""
    for check in lab.checks:
        if check.expect != "same":
            continue
        found: list[CheckOutcome] = []
        for outcome in outcomes:
            found += [c for c in outcome.checks if c.name == check.name]
            for run in outcome.runs:
                found += [c for c in run.checks if c.name == check.name]
        reference = found[0].value if found else None
        for c in found:
            if c.value != reference:
                c.passed = False
                c.detail = f"got {c.value}, the first run got {reference}"
