"""How long a lab run takes, before it starts (pure): `--dry-run`'s figures.

Counted from the plan: every timed run lasts the run's duration (a lab timed by
phase: its `[timing] run` seconds at scale 1, times the scale) plus its warm-up,
the preparation every run gets (settings, a CHECKPOINT, the observer: about a
second here) and, where the segment restarts the server before every run, the
restart; a fresh step rebuilds its data before each run. Once: the dataset's
setup (`[timing] setup` at scale 1, times the scale) and the server's start. With
sequential looks a segment stops at the first look where every comparison is
decided, so the figure is a range: every segment stopping at its first look, and
at its last. What a lab declares no figure for is named, not guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lab.spec import Lab, MetricSource
from ..params import RunParams
from ..words import format_duration, plural
from .plan import Plan

# measured here (2 cores, the labs' runs at scale 1, 2026-11-26): what a plan adds to
# its runs' own seconds
PREPARE_S = 0.3  # settings, CHECKPOINT, observer start and stop, per timed run
RESTART_S = 1.0  # a fresh postmaster, per run of a segment that restarts
START_S = 3.0  # initdb, the server's start and stop, the reports


@dataclass(frozen=True)
class Estimate:
    shortest_s: float  # every segment stopping at its first look (fixed rounds: all)
    longest_s: float  # every planned round
    runs_shortest: int
    runs_longest: int
    unknown: tuple[str, ...] = ()  # what the lab gives no figure for

    def describe(self) -> str:
        """'about 12 minutes (36 runs)', or 'between 42 and 104 minutes (96 to 240
        runs; sequential looks stop a segment once every comparison is decided)'."""
        if self.runs_shortest == self.runs_longest:
            text = f"about {format_duration(self.longest_s)} ({plural(self.runs_longest, 'run')})"
        else:
            text = (
                f"between {format_duration(self.shortest_s)} and "
                f"{format_duration(self.longest_s)} ({self.runs_shortest} to "
                f"{self.runs_longest} runs; sequential looks stop a segment once every "
                "comparison is decided)"
            )
        if self.unknown:
            text += f", not counting {' and '.join(self.unknown)}"
        return text


def estimate(lab: Lab, params: RunParams, plan: Plan) -> Estimate:
    unknown: list[str] = []
    if lab.metric.source is MetricSource.PHASES:
        if lab.timing.run_s is None:
            unknown.append("the runs' own time (the lab gives no [timing] run)")
        run_s = (lab.timing.run_s or 0.0) * params.scale
    else:
        run_s = float(params.duration_s)
    setup_s = lab.timing.setup_s * params.scale
    if lab.dataset.setup and not lab.timing.setup_s:
        unknown.append("the dataset's setup (the lab gives no [timing] setup)")
    once = setup_s if not all(lab.step(n).fresh for seg in plan.segments for n in seg.steps) else 0
    shortest = longest = START_S + once
    runs_shortest = runs_longest = 0
    for segment in plan.segments:
        per_round = 0.0
        for name in segment.steps:
            step = lab.step(name)
            per_round += run_s + params.warmup_s + PREPARE_S
            per_round += RESTART_S if segment.restart_each_run else 0.0
            per_round += setup_s if step.fresh else 0.0
        first = segment.looks[0] if segment.looks else len(segment.rounds)
        shortest += per_round * first
        longest += per_round * len(segment.rounds)
        runs_shortest += len(segment.steps) * first
        runs_longest += len(segment.steps) * len(segment.rounds)
    return Estimate(shortest, longest, runs_shortest, runs_longest, tuple(unknown))
