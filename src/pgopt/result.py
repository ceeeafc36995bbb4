"""Turn an experiment's samples into the result.json document (pgopt.lab-result/1).

Pure: statistics, ratios and verdicts are computed here from the kept samples,
so `pgopt report` can re-render any stored run without a server.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from . import machine
from .analysis import bottleneck, guards, observed, stats
from .analysis.comparisons import Pair, lab_decisions, reference_of
from .analysis.verdicts import (
    LOOKS,
    MIN_ROUNDS,
    SEQUENTIAL_ALPHA,
    SIGN_FLIP_FROM,
    Decision,
    Rule,
    Verdict,
    as_dict,
)
from .lab.spec import Lab, Reported
from .model.outcomes import ExperimentOutcome, RunRecord, StepOutcome
from .redact import redactor
from .result_runs import latency, observer_summary, run_dict, server_cpu_us_per_tx
from .store import SCHEMA


def build_result(
    outcome: ExperimentOutcome, *, command: str, error: str | None = None
) -> dict[str, Any]:
    """The whole result.json document, built once; `error`: why the run stopped before
    its end (the result then holds the runs that finished)."""
    lab = outcome.lab
    rule = _rule(outcome)
    order = [o.step.name for o in outcome.steps]
    parents = {s.name: s.parent for s in lab.steps}
    by_name = {o.step.name: o for o in outcome.steps}
    decisions = lab_decisions(
        outcome.steps, lab.steps, higher_is_better=lab.metric.higher_is_better, rule=rule
    )
    steps_out: list[dict[str, Any]] = []
    done: dict[str, dict[str, Any]] = {}
    for step_outcome in outcome.steps:
        name = step_outcome.step.name
        reference = reference_of(name, order, parents)
        step = _step(lab, step_outcome, order[0], reference, decisions)
        if step_outcome.runs and step_outcome.runs[0].phases:
            step["phases"] = _phases(
                step_outcome.runs,
                by_name[reference].runs if reference else [],
                decisions,
                Pair(reference, name) if reference else None,
            )
        _add_observations(step, step_outcome, done[reference] if reference else None)
        steps_out.append(step)
        done[name] = step
    return {
        "schema": SCHEMA,
        "lab": lab.name,
        "title": lab.title,
        "seed": lab.seed,
        "description": lab.description,
        "started_at": outcome.started_at,
        "duration_s": round(outcome.duration_s, 1),
        "command": redactor(command),
        "target": {
            k: {n: redactor(str(x)) for n, x in v.items()}
            if isinstance(v, dict)
            else redactor(str(v))
            for k, v in outcome.target.items()
        },
        "machine": machine.describe(),
        "params": outcome.params.as_dict(),
        "variables": outcome.variables,
        "metric": {
            "name": lab.metric.name,
            "unit": lab.metric.unit,
            "higher_is_better": lab.metric.higher_is_better,
        },
        "verdicts": _verdict_rule(outcome, rule, len(decisions)),
        "plan": _plan(outcome),
        "steps": steps_out,
        "sweeps": _sweeps(outcome.steps, steps_out),
        "skipped": outcome.skipped,
        "observer": observer_summary([r for o in outcome.steps for r in o.runs]),
        "reruns": [
            {
                "segment": r.segment + 1,
                "round": r.round,
                "reason": r.reason,
                "runs": [run_dict(run) for run in r.runs],
            }
            for r in outcome.reruns
        ],
        "complete": error is None,
        **({"error": redactor(error)} if error is not None else {}),
        "passed": all(c["passed"] for s in steps_out for c in s["checks"]),
    }


def _rule(outcome: ExperimentOutcome) -> Rule:
    sequential = outcome.plan.sequential if outcome.plan else outcome.params.reps is None
    return Rule.for_mode(sequential, outcome.params.margin)


def _verdict_rule(outcome: ExperimentOutcome, rule: Rule, comparisons: int) -> dict[str, Any]:
    """How the verdicts were drawn, so a reader of result.json can redo them."""
    sequential = rule.alpha == SEQUENTIAL_ALPHA
    return {
        "method": "paired t on log ratios by round (Welch across segments)",
        "alpha": rule.alpha,
        "sequential": sequential,
        "looks": list(LOOKS) if sequential else [],
        "margin": rule.margin,
        "min_rounds": MIN_ROUNDS,
        "sign_flip_from": SIGN_FLIP_FROM,
        "multiple_comparisons": "benjamini-hochberg",
        "comparisons": comparisons,
    }


def _plan(outcome: ExperimentOutcome) -> dict[str, Any] | None:
    """The seed, and per segment the rounds that ran: their orders and pgbench seeds."""
    plan = outcome.plan
    if plan is None:
        return None
    progress = {p.index: p for p in outcome.segments}
    segments = []
    for segment in plan.segments:
        ran = progress[segment.index].rounds if segment.index in progress else 0
        segments.append(
            {
                "steps": list(segment.steps),
                "rounds": ran,
                "planned_rounds": len(segment.rounds),
                "stopped": progress[segment.index].stopped if segment.index in progress else "",
                "orders": [list(r.order) for r in segment.rounds[:ran]],
                "pgbench_seeds": [r.pgbench_seed for r in segment.rounds[:ran]],
                "restart_each_run": segment.restart_each_run,
                "why_restart": segment.why_restart,
            }
        )
    return {"seed": plan.seed, "segments": segments}


def _values(outcome: StepOutcome) -> list[float]:
    return [r.value for r in outcome.runs]


def _phase_names(runs: list[RunRecord]) -> list[str]:
    return [name for name, _ in runs[0].phases] if runs else []


def _step(
    lab: Lab,
    outcome: StepOutcome,
    baseline: str,
    reference: str | None,
    decisions: dict[Pair, Decision],
) -> dict[str, Any]:
    step = outcome.step
    samples = _values(outcome)
    low, high = stats.geometric_interval(samples)
    cv = stats.coefficient_of_variation(samples)
    checks = [*outcome.checks, *(c for r in outcome.runs for c in r.checks)]
    warnings: list[str] = []
    if cv is not None and cv > stats.CV_WARNING:
        warnings.append(f"runs vary by {cv:.0%} (coefficient of variation above 10%)")
    vs_base = decisions.get(Pair(baseline, step.name))
    vs_prev = decisions.get(Pair(reference, step.name)) if reference else None
    result: dict[str, Any] = {
        "name": step.name,
        "title": step.title,
        "note": step.note,
        "changes": step.changes,
        "settings": outcome.settings,
        "clients": step.clients,
        "metric": {
            "name": lab.metric.name,
            "unit": lab.metric.unit,
            "higher_is_better": lab.metric.higher_is_better,
            "median": stats.median(samples),
            "ci95": [low, high],
            "samples": samples,
            "cv": cv,
            "rounds": len(samples),
        },
        "ratio_vs_baseline": (as_dict(vs_base) if vs_base else {"median": 1.0, "ci95": [1.0, 1.0]}),
        "compared_with": reference,
        "ratio_vs_previous": as_dict(vs_prev) if vs_prev else None,
        "verdict_vs_baseline": str(vs_base.verdict) if vs_base else str(Verdict.NOT_APPLICABLE),
        "verdict_vs_previous": str(vs_prev.verdict) if vs_prev else str(Verdict.NOT_APPLICABLE),
        "latency_ms": latency(outcome.runs),
        "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in checks],
        "facts": outcome.facts,
        "fact_units": outcome.fact_units,
        "runs": [run_dict(r) for r in outcome.runs],
        "warnings": warnings,
        "reported": _reported(step.reported, lab.step(baseline).reported),
    }
    tps = [r.tps for r in outcome.runs if r.tps is not None]
    if tps:
        result["tps"] = {"median": stats.median(tps), "samples": tps}
    cpu = server_cpu_us_per_tx(outcome.runs)
    if cpu:
        result["server_cpu_us_per_tx"] = {"median": stats.median(cpu), "samples": cpu}
    return result


def _add_observations(
    step: dict[str, Any], outcome: StepOutcome, previous: dict[str, Any] | None
) -> None:
    """Waits, statistics, the bottleneck, the why-line and the guards' warnings."""
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
    cpu = server_cpu_us_per_tx(outcome.runs)
    if cpu and len(cpu) == len(outcome.runs):
        figures["server_cpu_us_per_tx"] = cpu
    medians = {k: round(stats.median(v), 3) for k, v in figures.items()}
    step["waits"] = shares
    step["wait_samples"] = sum(counts.values())
    step["bottleneck"] = [
        {"wait": name, "share": share} for name, share in bottleneck.top_waits(shares)
    ]
    step["stats"] = {"per_unit": medians, "checkpoints": checkpoints}
    step["why"] = bottleneck.why_line(
        shares,
        previous["waits"] if previous else None,
        medians,
        previous["stats"]["per_unit"] if previous else None,
    )
    step["warnings"] += guards.merge([run.warnings for run in outcome.runs])


def _sweeps(outcomes: list[StepOutcome], steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each client sweep: the metric at every client count, the best, and the knee."""
    groups: dict[str, list[tuple[int, float]]] = {}
    for outcome, step in zip(outcomes, steps, strict=True):
        if outcome.step.sweep:
            groups.setdefault(outcome.step.sweep, []).append(
                (outcome.step.clients, step["metric"]["median"])
            )
    out = []
    for name, points in groups.items():
        points.sort()
        best, knee = stats.best_and_knee(points)
        out.append(
            {
                "name": name,
                "points": [{"clients": c, "median": v} for c, v in points],
                "best_clients": best,
                "knee_clients": knee,
            }
        )
    return out


def _reported(mine: Reported | None, base: Reported | None) -> dict[str, Any] | None:
    """The article's figure, and its ratio to the article's baseline when both exist."""
    if mine is None:
        return None
    out: dict[str, Any] = {"value": mine.value, "unit": mine.unit, "note": mine.note}
    if mine.phases:
        out["phases"] = dict(mine.phases)
    if base is not None and base.value and base.unit == mine.unit:
        out["ratio_vs_baseline"] = mine.value / base.value
    return out


def _phases(
    runs: list[RunRecord],
    previous_runs: list[RunRecord],
    decisions: dict[Pair, Decision],
    pair: Pair | None,
) -> list[dict[str, Any]]:
    """Each timed phase's median seconds, its waits and WAL, and its ratio to the same
    phase in the step this one derives from, with a verdict (fewer seconds is faster)
    and a why-line."""
    out = []
    for name in _phase_names(runs):
        samples = [s for r in runs for n, s in r.phases if n == name]
        low, high = stats.geometric_interval(samples)
        phase: dict[str, Any] = {
            "name": name,
            "seconds": round(stats.median(samples), 3),
            "ci95": [round(low, 3), round(high, 3)],
            "samples": [round(s, 3) for s in samples],
        }
        shares, figures = _phase_observations(runs, name)
        if figures:
            phase["waits"] = shares
            phase["wal_bytes"] = figures["wal_bytes_per_run"]
        decision = decisions.get(Pair(pair.reference, pair.step, name)) if pair else None
        if decision is not None:
            phase["ratio_vs_previous"] = as_dict(decision)
            phase["verdict_vs_previous"] = str(decision.verdict)
        previous_shares, previous_figures = _phase_observations(previous_runs, name)
        if figures:
            phase["why"] = bottleneck.why_line(
                shares,
                previous_shares if previous_figures else None,
                figures,
                previous_figures or None,
            )
        out.append(phase)
    return out


def _phase_observations(
    runs: list[RunRecord], name: str
) -> tuple[dict[str, float], dict[str, float]]:
    """One phase's wait shares over all runs and its median WAL bytes per run; empty
    when no run observed the phase."""
    seen = [r.observation.phases[name] for r in runs if name in r.observation.phases]
    if not seen:
        return {}, {}
    counts: Counter[str] = Counter()
    for phase in seen:
        counts.update(phase.waits)
    wal = stats.median([float(p.wal_bytes) for p in seen])
    return observed.shares(counts), {"wal_bytes_per_run": wal}
