"""Turn an experiment's samples into the result.json document (pgopt.lab-result/1).

Pure: statistics, ratios and verdicts are computed here from the kept samples,
so `pgopt report` can re-render any stored run without a server.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from . import bottleneck, guards, machine, sampler, snapshots, stats
from .lab.spec import Lab
from .outcomes import ExperimentOutcome, RunRecord, StepOutcome
from .pgbench.parse import percentile
from .redact import redactor
from .store import SCHEMA


def build_result(outcome: ExperimentOutcome, *, command: str) -> dict[str, Any]:
    lab = outcome.lab
    seed = outcome.params.seed
    steps_out: list[dict[str, Any]] = []
    baseline = outcome.steps[0]
    done: dict[str, tuple[StepOutcome, dict[str, Any]]] = {}
    for index, step_outcome in enumerate(outcome.steps):
        reference = _reference(lab, step_outcome, done, steps_out)
        step = _step(lab, step_outcome, baseline, reference[0] if reference else None, seed + index)
        _add_observations(step, step_outcome, reference[1] if reference else None)
        steps_out.append(step)
        done[step_outcome.step.name] = (step_outcome, step)
    return {
        "schema": SCHEMA,
        "lab": lab.name,
        "title": lab.title,
        "seed": lab.seed,
        "description": lab.description,
        "started_at": outcome.started_at,
        "duration_s": round(outcome.duration_s, 1),
        "command": redactor(command),
        "target": {k: redactor(str(v)) for k, v in outcome.target.items()},
        "machine": machine.describe(),
        "params": outcome.params.as_dict(),
        "variables": outcome.variables,
        "metric": {
            "name": lab.metric.name,
            "unit": lab.metric.unit,
            "higher_is_better": lab.metric.higher_is_better,
        },
        "steps": steps_out,
        "sweeps": _sweeps(outcome.steps, steps_out),
        "skipped": outcome.skipped,
        "complete": True,
        "passed": all(c["passed"] for s in steps_out for c in s["checks"]),
    }


def _reference(
    lab: Lab,
    outcome: StepOutcome,
    done: dict[str, tuple[StepOutcome, dict[str, Any]]],
    steps_out: list[dict[str, Any]],
) -> tuple[StepOutcome, dict[str, Any]] | None:
    """The step this one is compared with: the step it derives from (`from`, or the one
    before it in the lab), or its nearest ancestor that ran; else the step run before."""
    parent = outcome.step.parent
    while parent is not None and parent not in done:
        parent = lab.step(parent).parent
    if parent is not None:
        return done[parent]
    if steps_out:
        return done[steps_out[-1]["name"]]
    return None


def _values(outcome: StepOutcome) -> list[float]:
    return [r.value for r in outcome.runs]


def _step(
    lab: Lab,
    outcome: StepOutcome,
    baseline: StepOutcome,
    previous: StepOutcome | None,
    seed: int,
) -> dict[str, Any]:
    step = outcome.step
    samples = _values(outcome)
    higher = lab.metric.higher_is_better
    interval = stats.bootstrap_median(samples, seed=seed)
    vs_base = stats.bootstrap_ratio(samples, _values(baseline), seed=seed)
    vs_prev = stats.bootstrap_ratio(samples, _values(previous), seed=seed) if previous else None
    cv = stats.coefficient_of_variation(samples)
    checks = [*outcome.checks, *(c for r in outcome.runs for c in r.checks)]
    warnings: list[str] = []
    if cv is not None and cv > stats.CV_WARNING:
        warnings.append(f"runs vary by {cv:.0%} (coefficient of variation above 10%)")
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
            "higher_is_better": higher,
            "median": interval.median,
            "ci95": [interval.low, interval.high],
            "samples": samples,
            "cv": cv,
        },
        "ratio_vs_baseline": vs_base.as_dict(),
        "compared_with": previous.step.name if previous else None,
        "ratio_vs_previous": vs_prev.as_dict() if vs_prev else None,
        "verdict_vs_baseline": (
            stats.verdict(vs_base, higher_is_better=higher)
            if outcome is not baseline
            else stats.NOT_APPLICABLE
        ),
        "verdict_vs_previous": (
            stats.verdict(vs_prev, higher_is_better=higher) if vs_prev else stats.NOT_APPLICABLE
        ),
        "latency_ms": _latency(outcome.runs),
        "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in checks],
        "facts": outcome.facts,
        "fact_units": outcome.fact_units,
        "runs": [_run(r) for r in outcome.runs],
        "warnings": warnings,
        "reported": _reported(outcome, baseline),
    }
    if any(r.phases for r in outcome.runs):
        result["phases"] = _phases(outcome.runs, previous.runs if previous else [], seed)
    tps = [r.tps for r in outcome.runs if r.tps is not None]
    if tps:
        result["tps"] = {"median": stats.median(tps), "samples": tps}
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
        for key, value in snapshots.unit_figures(run.observation.stats, tx).items():
            figures.setdefault(key, []).append(value)
    shares = sampler.shares(counts)
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


def _reported(outcome: StepOutcome, baseline: StepOutcome) -> dict[str, Any] | None:
    """The article's figure, and its ratio to the article's baseline when both exist."""
    mine, base = outcome.step.reported, baseline.step.reported
    if mine is None:
        return None
    out: dict[str, Any] = {"value": mine.value, "unit": mine.unit, "note": mine.note}
    if mine.phases:
        out["phases"] = dict(mine.phases)
    if base is not None and base.value and base.unit == mine.unit:
        out["ratio_vs_baseline"] = mine.value / base.value
    return out


def _latency(runs: list[RunRecord]) -> dict[str, float | None] | None:
    pooled: list[int] = []
    averages: list[float] = []
    for r in runs:
        if r.pgbench is None:
            continue
        pooled.extend(r.pgbench.latencies_us)
        if r.pgbench.summary.latency_avg_ms is not None:
            averages.append(r.pgbench.summary.latency_avg_ms)
    if not averages and not pooled:
        return None
    pooled.sort()

    def ms(q: float) -> float | None:
        v = percentile(pooled, q)
        return round(v / 1000.0, 4) if v is not None else None

    return {
        "avg": round(stats.median(averages), 4) if averages else None,
        "p50": ms(50),
        "p95": ms(95),
        "p99": ms(99),
    }


def _phases(
    runs: list[RunRecord], previous_runs: list[RunRecord], seed: int
) -> list[dict[str, Any]]:
    """Each timed phase's median seconds, its waits and WAL, and its ratio to the same
    phase in the step this one derives from, with a verdict (fewer seconds is faster)
    and a why-line."""

    def samples_of(records: list[RunRecord], name: str) -> list[float]:
        return [s for r in records for n, s in r.phases if n == name]

    out = []
    for name, _ in runs[0].phases:
        samples = samples_of(runs, name)
        interval = stats.bootstrap_median(samples, seed=seed)
        phase: dict[str, Any] = {
            "name": name,
            "seconds": round(interval.median, 3),
            "ci95": [round(interval.low, 3), round(interval.high, 3)],
            "samples": [round(s, 3) for s in samples],
        }
        shares, figures = _phase_observations(runs, name)
        if figures:
            phase["waits"] = shares
            phase["wal_bytes"] = figures["wal_bytes_per_run"]
        before = samples_of(previous_runs, name)
        if before:
            ratio = stats.bootstrap_ratio(samples, before, seed=seed)
            phase["ratio_vs_previous"] = ratio.as_dict()
            phase["verdict_vs_previous"] = stats.verdict(ratio, higher_is_better=False)
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
    observed = [r.observation.phases[name] for r in runs if name in r.observation.phases]
    if not observed:
        return {}, {}
    counts: Counter[str] = Counter()
    for phase in observed:
        counts.update(phase.waits)
    wal = stats.median([float(p.wal_bytes) for p in observed])
    return sampler.shares(counts), {"wal_bytes_per_run": wal}


def _run(record: RunRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rep": record.rep,
        "value": record.value,
        "started_at": record.started_at,
    }
    if record.pgbench is not None:
        s = record.pgbench.summary
        out.update(
            {
                "tps": s.tps,
                "transactions": s.transactions,
                "failed": s.failed,
                "latency_avg_ms": s.latency_avg_ms,
                "wall_s": round(record.pgbench.wall_s, 3),
                "client_cpu_s": round(record.pgbench.client_cpu_s, 3),
                "progress": [[p.time_s, p.tps] for p in record.pgbench.progress],
                "statements": [
                    {"script": st.script, "latency_ms": st.latency_ms, "command": st.command}
                    for st in s.statements
                ],
            }
        )
    if record.phases:
        out["phases"] = [_run_phase(record, n, sec) for n, sec in record.phases]
    if record.background is not None:
        bg = record.background.summary
        out["background"] = {"tps": bg.tps, "transactions": bg.transactions, "failed": bg.failed}
    if record.monitor:
        out["monitor"] = record.monitor
    if record.facts:
        out["facts"] = record.facts
    out["waits"] = dict(record.observation.waits.most_common())
    out["stats"] = record.observation.stats
    out["warnings"] = record.warnings
    return out


def _run_phase(record: RunRecord, name: str, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "seconds": round(seconds, 3)}
    observed = record.observation.phases.get(name)
    if observed is not None:
        out["wal_bytes"] = observed.wal_bytes
        out["waits"] = dict(observed.waits.most_common())
    return out
