"""How long a lab run takes, before it starts (pure): `--dry-run`'s figures.

Counted from the plan: every timed run lasts the run's duration (a lab timed by
phase: its `[timing] run` seconds at scale 1, times the scale) plus its warm-up,
the preparation every run gets (settings, a CHECKPOINT, the observer: about a
second here), what each slice after the first adds in a sliced round and, where
the segment restarts the server before every run, the restart; a fresh step's
run starts from a clone of its template (a workload that writes) or from the
template itself (one that does not). Once: the dataset's setup (`[timing] setup`
at scale 1, times the scale; for a copy of the user's data, from its size), each
fresh step's template, and the server's start. With sequential looks a segment
stops at the first look where every comparison is decided, so the figure is a
range: every segment stopping at its first look, and at its last. What a lab
declares no figure for is named, not guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lab.spec import Lab, MetricSource
from ..model.plan import Plan
from ..params import RunParams
from ..words import format_duration, plural
from .script_writes import first_write

# measured here (2 cores, the labs' runs at scale 1, 2026-11-26): what a plan adds to
# its runs' own seconds
PREPARE_S = 0.3  # settings, CHECKPOINT, observer start and stop, per timed run
RESTART_S = 1.0  # a fresh postmaster, per run of a segment that restarts
# a slice after a run's first (engine/slices.py): pgbench's start, the data renamed in,
# the observer's snapshots around it (the smoke lab, 27 slices of 1 s in 27.7 s, 2026-11-27)
SLICE_COST_S = 0.03
START_S = 3.0  # initdb, the server's start and stop, the reports
# a copy of the user's data (pgopt ab), in bytes of the restored copy per second:
# bench/ab_scale.py, pgbench data of 1 GB copied from the local PostgreSQL 15
# (bench/README.md, 2026-11-26); pg_dump and pg_basebackup from a throwaway
# PostgreSQL 18 here, pgbench at scale 50 (792 MB, its heaps 672 MB; 2026-11-29)
DUMP_BPS = 160e6  # pg_dump, one job, directory format, uncompressed: heap bytes read
BASEBACKUP_BPS = 300e6  # pg_basebackup unthrottled: 814 MB of cluster in 2.6 s
RESTORE_BPS = 55e6  # pg_restore --jobs: rows, then indexes and constraints, VACUUM
BUILD_BPS = 320e6  # a template: a copy of the restored data, the variant's SQL, ANALYZE
CLONE_BPS = 550e6  # CREATE DATABASE ... STRATEGY FILE_COPY, its two checkpoints
CLONE_S = 0.3  # a clone of a small database


@dataclass(frozen=True)
class Estimate:
    shortest_s: float  # every segment stopping at its first look (fixed rounds: all)
    longest_s: float  # every planned round
    runs_shortest: int
    runs_longest: int
    unknown: tuple[str, ...] = ()  # what the lab gives no figure for
    parts: tuple[tuple[str, float], ...] = ()  # what the longest goes to, where known

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
        if self.parts:
            text += "; " + ", ".join(f"{n} {format_duration(s)}" for n, s in self.parts)
        return text


def estimate(
    lab: Lab,
    params: RunParams,
    plan: Plan,
    data_bytes: int | None = None,
    copy_s: float | None = None,
) -> Estimate:
    """The plan's wall time; `data_bytes`: the size of the user's data a copy restores
    (pgopt ab), which its copy, templates and clones take time by; `copy_s`: the copy's
    own seconds where the caller knows them (its pace, its checkpoint's wait)."""
    unknown: list[str] = []
    if lab.metric.source is MetricSource.PHASES:
        if lab.timing.run_s is None:
            unknown.append("the runs' own time (the lab gives no [timing] run)")
        run_s = (lab.timing.run_s or 0.0) * params.scale
    else:
        run_s = float(params.duration_s)
    setup_s = lab.timing.setup_s * params.scale
    if data_bytes is None and lab.dataset.setup and not lab.timing.setup_s:
        unknown.append("the dataset's setup (the lab gives no [timing] setup)")
    steps = [lab.step(n) for seg in plan.segments for n in seg.steps]
    fresh = [s for s in steps if s.fresh]
    build_s = 0.0
    if data_bytes is None or copy_s is None:
        copy_s = 0.0 if data_bytes is None else data_bytes / DUMP_BPS
    clone_s = CLONE_S
    if data_bytes is not None:
        setup_s = data_bytes / RESTORE_BPS
        build_s = len({s.schema for s in fresh}) * data_bytes / BUILD_BPS
        clone_s += data_bytes / CLONE_BPS
    elif fresh:  # the dataset's setup files, once per set of a step's variables
        setup_s *= len({(tuple(sorted(s.variables.items())), s.clients) for s in fresh})
    per_run_data = 0.0 if not fresh or first_write(fresh) is None else clone_s
    shortest = longest = START_S + copy_s + setup_s + build_s
    runs_shortest = runs_longest = 0
    for segment in plan.segments:
        per_run = run_s + params.warmup_s + PREPARE_S + per_run_data
        per_run += RESTART_S if segment.restart_each_run else 0.0
        first = segment.looks[0] if segment.looks else len(segment.rounds)
        for planned in segment.rounds:
            per_round = len(segment.steps) * (per_run + (planned.slices - 1) * SLICE_COST_S)
            shortest += per_round if planned.number <= first else 0.0
            longest += per_round
        runs_shortest += len(segment.steps) * first
        runs_longest += len(segment.steps) * len(segment.rounds)
    parts: tuple[tuple[str, float], ...] = ()
    if data_bytes is not None:
        parts = (
            ("copying", copy_s),
            ("restoring", setup_s),
            ("building the variants", build_s),
            ("preparing the runs", (PREPARE_S + per_run_data) * runs_longest),
            ("measuring", (run_s + params.warmup_s) * runs_longest),
        )
    return Estimate(shortest, longest, runs_shortest, runs_longest, tuple(unknown), parts)
