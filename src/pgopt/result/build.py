"""Turn an experiment's measurements into its result record (pgopt.lab-result/1).

Pure: statistics, ratios and verdicts are computed here from the kept samples,
once; model/codec.py writes the record as result.json.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from .. import machine
from ..analysis import bottleneck, guards, observed, stats
from ..analysis.comparisons import (
    Pair,
    baseline_of,
    evidence,
    lab_decisions,
    reference_of,
    run_samples,
)
from ..analysis.verdicts import (
    MIN_ROUNDS,
    SEQUENTIAL_ALPHA,
    SIGN_FLIP_FROM,
    Decision,
    Rule,
    ratio_of,
)
from ..lab.spec import Lab, Metric
from ..lab.spec import Reported as ReportedSpec
from ..model.codec import SCHEMA
from ..model.outcomes import ExperimentOutcome, StepOutcome
from ..model.result import (
    IDENTITY,
    Ceiling,
    Check,
    LabResult,
    MetricName,
    MetricSummary,
    Phase,
    PlanRecord,
    Reported,
    Rerun,
    Segment,
    Series,
    Skipped,
    StepResult,
    Sweep,
    SweepPoint,
    TopWait,
    VerdictRule,
)
from ..model.verdict import Verdict
from ..params import LOOKS
from ..redact import redactor
from ..replay.fidelity import assess
from ..words import plural
from .phases import step_phases
from .runs import cpu_share, latency, observer_summary, run_result, server_cpu_us_per_tx
from .time_spent import time_breakdown


def build_result(
    outcome: ExperimentOutcome, *, command: str, error: str | None = None
) -> LabResult:
    """The whole result, built once; `error`: why the run stopped before its end (the
    result then holds the runs that finished)."""
    lab = outcome.lab
    rule = _rule(outcome)
    order = [o.step.name for o in outcome.steps]
    parents = {s.name: s.parent for s in lab.steps}
    starts = {s.name for s in lab.steps if s.baseline}
    by_name = {o.step.name: o for o in outcome.steps}
    decisions = lab_decisions(
        outcome.steps, lab.steps, higher_is_better=lab.metric.higher_is_better, rule=rule
    )
    steps: list[StepResult] = []
    done: dict[str, StepResult] = {}
    for step_outcome in outcome.steps:
        name = step_outcome.step.name
        reference = reference_of(name, order, parents, starts)
        baseline = baseline_of(name, order, parents, starts)
        phases = None
        if step_outcome.runs and step_outcome.runs[0].phases:
            phases = step_phases(
                step_outcome.runs,
                by_name[reference].runs if reference else [],
                decisions,
                Pair(reference, name) if reference else None,
            )
        step = _step(lab, step_outcome, baseline, reference, decisions, phases)
        step = _with_observations(step, step_outcome, done[reference] if reference else None)
        if step_outcome.step.server is not None:
            step = replace(step, server=_server(outcome.target, step_outcome.step.server))
        steps.append(step)
        done[name] = step
    return LabResult(
        schema=SCHEMA,
        lab=lab.name,
        title=lab.title,
        seed=lab.seed,
        description=lab.description,
        started_at=outcome.started_at,
        duration_s=round(outcome.duration_s, 1),
        command=redactor(command),
        target=_redacted(outcome.target),
        machine=machine.describe(),
        params=outcome.params.as_dict(),
        variables=outcome.variables,
        metric=MetricName(lab.metric.name, lab.metric.unit, lab.metric.higher_is_better),
        verdicts=_verdict_rule(rule, len(decisions)),
        plan=_plan(outcome),
        steps=tuple(steps),
        sweeps=_sweeps(outcome.steps, steps),
        skipped=tuple(Skipped(name, reason) for name, reason in outcome.skipped),
        observer=observer_summary([r for o in outcome.steps for r in o.runs]),
        reruns=tuple(
            Rerun(r.segment + 1, r.round, r.reason, tuple(run_result(run) for run in r.runs))
            for r in outcome.reruns
        ),
        complete=error is None,
        error=redactor(error) if error is not None else None,
        passed=all(c.passed for s in steps for c in s.checks),
        ceiling=_ceiling(lab.metric, outcome.steps, rule.alpha),
        fidelity=assess(lab.replay, steps[0].runs) if lab.replay and steps else None,
        time=time_breakdown(outcome),
    )


def _server(target: dict[str, Any], name: str) -> dict[str, Any]:
    """The version tag of a step run on one of several servers."""
    facts = target.get("servers", {}).get(name, {})
    return {"name": name, **{k: facts.get(k) for k in ("server_version", "pg_bin")}}


def _ceiling(metric: Metric, outcomes: list[StepOutcome], alpha: float) -> Ceiling | None:
    """The best step's share of the ceiling step's figure, where the lab names one and
    both ran."""
    top = next((o for o in outcomes if o.step.name == metric.ceiling and o.runs), None)
    others = [o for o in outcomes if o.step.name != metric.ceiling and o.runs]
    if top is None or not others:
        return None
    pick = max if metric.higher_is_better else min
    best = pick(others, key=lambda o: stats.median(_values(o)))
    e = evidence(run_samples(top.runs), run_samples(best.runs), alpha=alpha)
    assert e is not None  # both have runs
    share = e.ratio if metric.higher_is_better else 1 / e.ratio
    low, high = e.ci95 if metric.higher_is_better else (1 / e.ci95[1], 1 / e.ci95[0])
    return Ceiling(
        step=top.step.name,
        median=stats.median(_values(top)),
        best=best.step.name,
        best_median=stats.median(_values(best)),
        share=share,
        share_ci95=(low, high),
        rounds=e.rounds,
    )


def _rule(outcome: ExperimentOutcome) -> Rule:
    sequential = outcome.plan.sequential if outcome.plan else outcome.params.reps is None
    return Rule.for_mode(sequential, outcome.params.margin)


def _verdict_rule(rule: Rule, comparisons: int) -> VerdictRule:
    """How the verdicts were drawn, so a reader of result.json can redo them."""
    sequential = rule.alpha == SEQUENTIAL_ALPHA
    return VerdictRule(
        method="paired t on log ratios by round (Welch across segments)",
        alpha=rule.alpha,
        sequential=sequential,
        looks=LOOKS if sequential else (),
        margin=rule.margin,
        min_rounds=MIN_ROUNDS,
        sign_flip_from=SIGN_FLIP_FROM,
        multiple_comparisons="benjamini-hochberg",
        comparisons=comparisons,
    )


def _plan(outcome: ExperimentOutcome) -> PlanRecord | None:
    """The seed, and per segment the rounds that ran: their orders and pgbench seeds
    (a round the run stopped in included, with how far it got)."""
    plan = outcome.plan
    if plan is None:
        return None
    progress = {p.index: p for p in outcome.segments}
    segments = []
    for segment in plan.segments:
        done = progress.get(segment.index)
        ran = done.rounds if done else 0
        stopped = done.stopped if done else ""
        shown = ran
        if done and done.under_way is not None:
            finished = sum(
                1
                for o in outcome.steps
                for r in o.runs
                if r.segment == segment.index and r.round == done.under_way
            )
            stopped = (
                f"stopped in round {done.under_way}, after {finished} of "
                f"{plural(len(segment.steps), 'run')}"
            )
            shown = done.under_way
        segments.append(
            Segment(
                steps=tuple(segment.steps),
                rounds=ran,
                planned_rounds=len(segment.rounds),
                stopped=stopped,
                orders=tuple(tuple(r.order) for r in segment.rounds[:shown]),
                pgbench_seeds=tuple(r.pgbench_seed for r in segment.rounds[:shown]),
                restart_each_run=segment.restart_each_run,
                why_restart=segment.why_restart,
                slice_s=segment.slice_s,
                sliced_rounds=tuple(r.number for r in segment.rounds[:shown] if r.slices > 1),
                why_whole=segment.why_whole or None,
            )
        )
    return PlanRecord(plan.seed, tuple(segments))


def _values(outcome: StepOutcome) -> list[float]:
    return [r.value for r in outcome.runs]


def _step(
    lab: Lab,
    outcome: StepOutcome,
    baseline: str,
    reference: str | None,
    decisions: dict[Pair, Decision],
    phases: tuple[Phase, ...] | None,
) -> StepResult:
    step = outcome.step
    samples = _values(outcome)
    low, high = stats.geometric_interval(samples)
    cv = stats.coefficient_of_variation(samples)
    checks = [*outcome.checks, *(c for r in outcome.runs for c in r.checks)]
    warnings: list[str] = []
    if cv is not None and cv > stats.CV_WARNING:
        warnings.append(f"runs vary by {cv:.0%} (coefficient of variation above 10%)")
    warnings += guards.merge([run.warnings for run in outcome.runs])
    vs_base = decisions.get(Pair(baseline, step.name))
    vs_prev = decisions.get(Pair(reference, step.name)) if reference else None
    tps = [r.tps for r in outcome.runs if r.tps is not None]
    cpu = server_cpu_us_per_tx(outcome.runs)
    return StepResult(
        name=step.name,
        title=step.title,
        note=step.note,
        changes=step.changes,
        settings=outcome.settings,
        clients=step.clients,
        metric=MetricSummary(
            name=lab.metric.name,
            unit=step.unit or lab.metric.unit,
            higher_is_better=lab.metric.higher_is_better,
            median=stats.median(samples),
            ci95=(low, high),
            samples=tuple(samples),
            cv=cv,
            rounds=len(samples),
        ),
        ratio_vs_baseline=ratio_of(vs_base) if vs_base else IDENTITY,
        baseline=baseline,
        compared_with=reference,
        ratio_vs_previous=ratio_of(vs_prev) if vs_prev else None,
        verdict_vs_baseline=vs_base.verdict if vs_base else Verdict.NOT_APPLICABLE,
        verdict_vs_previous=vs_prev.verdict if vs_prev else Verdict.NOT_APPLICABLE,
        latency_ms=latency(outcome.runs),
        checks=tuple(Check(c.name, c.passed, c.detail) for c in checks),
        facts=outcome.facts,
        fact_units=outcome.fact_units,
        headline=tuple(n for n in step.headline if n in outcome.facts) or None,
        runs=tuple(run_result(r) for r in outcome.runs),
        warnings=tuple(warnings),
        reported=_reported(step.reported, lab.step(baseline).reported),
        tps=Series(stats.median(tps), tuple(tps)) if tps else None,
        server_cpu_us_per_tx=Series(stats.median(cpu), tuple(cpu)) if cpu else None,
        cpu=cpu_share(outcome.runs),
        phases=phases,
        plans=outcome.plans,
    )


def _with_observations(
    step: StepResult, outcome: StepOutcome, previous: StepResult | None
) -> StepResult:
    """The step with its waits, statistics, bottleneck and why-line."""
    counts: Counter[str] = Counter()
    figures: dict[str, list[float]] = {}
    checkpoints = 0
    for run in outcome.runs:
        counts.update(run.observation.waits)
        checkpoints += int(run.observation.stats.get("checkpoints", 0))
        tx = run.pgbench.summary.transactions if run.pgbench else None
        for key, value in observed.unit_figures(run.observation.stats, tx).items():
            figures.setdefault(key, []).append(value)
    shares = observed.shares(counts)
    cpu = step.server_cpu_us_per_tx
    if cpu and len(cpu.samples) == len(outcome.runs):
        figures["server_cpu_us_per_tx"] = list(cpu.samples)
    medians = {k: round(stats.median(v), 3) for k, v in figures.items()}
    before = previous.stats["per_unit"] if previous and previous.stats else None
    return replace(
        step,
        waits=shares,
        wait_samples=sum(counts.values()),
        bottleneck=tuple(TopWait(name, share) for name, share in bottleneck.top_waits(shares)),
        stats={"per_unit": medians, "checkpoints": checkpoints},
        why=bottleneck.why_line(shares, previous.waits if previous else None, medians, before),
    )


def _sweeps(outcomes: list[StepOutcome], steps: list[StepResult]) -> tuple[Sweep, ...]:
    """Each client sweep: the metric at every client count, the best, and the knee."""
    groups: dict[str, list[tuple[int, float]]] = {}
    for outcome, step in zip(outcomes, steps, strict=True):
        if outcome.step.sweep:
            groups.setdefault(outcome.step.sweep, []).append(
                (outcome.step.clients, step.metric.median)
            )
    out = []
    for name, points in groups.items():
        points.sort()
        best, knee = stats.best_and_knee(points)
        out.append(Sweep(name, tuple(SweepPoint(c, v) for c, v in points), best, knee))
    return tuple(out)


def _reported(mine: ReportedSpec | None, base: ReportedSpec | None) -> Reported | None:
    """The article's figure, and its ratio to the article's baseline when both exist."""
    if mine is None:
        return None
    same_unit = base is not None and base.value and base.unit == mine.unit
    return Reported(
        value=mine.value,
        unit=mine.unit,
        note=mine.note,
        phases=dict(mine.phases) or None,
        ratio_vs_baseline=mine.value / base.value if base is not None and same_unit else None,
    )


def _redacted(value: Any) -> Any:
    """The target's description with every value a string, no secret in any: nested
    objects (settings) and lists (standbys) kept as they are."""
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return redactor(str(value))
