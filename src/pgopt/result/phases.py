"""A step's timed phases in the result (pure): each phase's median seconds and
interval, its wait shares and WAL per run, and its ratio and verdict against the
same phase in the step it derives from, with a why-line."""

from __future__ import annotations

from collections import Counter

from ..analysis import bottleneck, observed, stats
from ..analysis.comparisons import Pair
from ..analysis.verdicts import Decision, ratio_of
from ..model.outcomes import RunRecord
from ..model.result import Phase


def phase_names(runs: list[RunRecord]) -> list[str]:
    return [name for name, _ in runs[0].phases] if runs else []


def step_phases(
    runs: list[RunRecord],
    previous_runs: list[RunRecord],
    decisions: dict[Pair, Decision],
    pair: Pair | None,
) -> tuple[Phase, ...]:
    """Each timed phase's median seconds, its waits and WAL, and its ratio to the same
    phase in the step this one derives from, with a verdict (fewer seconds is faster)
    and a why-line."""
    out = []
    for name in phase_names(runs):
        samples = [s for r in runs for n, s in r.phases if n == name]
        low, high = stats.geometric_interval(samples)
        shares, figures = phase_observations(runs, name)
        previous_shares, previous_figures = phase_observations(previous_runs, name)
        decision = decisions.get(Pair(pair.reference, pair.step, name)) if pair else None
        out.append(
            Phase(
                name=name,
                seconds=round(stats.median(samples), 3),
                ci95=(round(low, 3), round(high, 3)),
                samples=tuple(round(s, 3) for s in samples),
                waits=shares if figures else None,
                wal_bytes=figures["wal_bytes_per_run"] if figures else None,
                ratio_vs_previous=ratio_of(decision) if decision else None,
                verdict_vs_previous=decision.verdict if decision else None,
                why=bottleneck.why_line(
                    shares,
                    previous_shares if previous_figures else None,
                    figures,
                    previous_figures or None,
                )
                if figures
                else None,
            )
        )
    return tuple(out)


def phase_observations(
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
