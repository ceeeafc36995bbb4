"""What the engine measured: records of runs, steps and the whole experiment.

Plain mutable dataclasses filled in as a lab runs; result/build.py turns them into
the result record (model/result.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..lab.spec import Lab, Step
from ..params import RunParams
from ..pgbench.record import PgbenchResult
from .observation import Observation
from .plan import Plan, Round
from .plans import StatementPlan
from .result import TemplateRecord


@dataclass
class CheckOutcome:
    name: str
    passed: bool
    detail: str = ""
    value: str | None = None


@dataclass
class RunRecord:
    """One timed run of one step."""

    step: str
    round: int  # 1-based within its segment
    value: float
    segment: int = 0
    position: int = 1  # its place in the round's order, 1-based
    pgbench_seed: int | None = None
    tps: float | None = None  # pgbench's rate (its warm-up is a run of its own)
    pgbench: PgbenchResult | None = None
    phases: list[tuple[str, float]] = field(default_factory=list)
    checks: list[CheckOutcome] = field(default_factory=list)
    started_at: str = ""
    observation: Observation = field(default_factory=Observation)
    warnings: list[str] = field(default_factory=list)
    background: PgbenchResult | None = None
    monitor: dict[str, list[list[float]]] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)  # a fresh step's, after this run
    server_cpu_s: float | None = None  # CPU of the server's processes during the run
    contamination: str | None = None  # why its per-second samples look disturbed
    detailed: bool | None = None  # pgbench kept its log and per-statement report
    slice_tps: list[float] = field(default_factory=list)  # each slice's rate, in a sliced round

    @classmethod
    def planned(
        cls, step: str, segment: int, planned: Round, position: int, started_at: str
    ) -> RunRecord:
        """The record of `step`'s run in `planned`, before it has measured anything."""
        return cls(
            step,
            planned.number,
            0.0,
            segment=segment,
            position=position,
            pgbench_seed=planned.pgbench_seed,
            started_at=started_at,
        )


@dataclass
class TimeSpent:
    """What a lab run's wall time went to, in seconds: the dataset's setup files, the
    fresh steps' templates, preparing each timed run (its data, settings, CHECKPOINT)
    and measuring (warm-ups and timed runs)."""

    setup_s: float = 0.0
    build_s: float = 0.0
    prepare_s: float = 0.0
    measure_s: float = 0.0
    runs: int = 0
    runs_from: str = ""  # fresh steps: "clone" or "template" ('' for other labs)
    how: str = ""  # how a fresh step's runs get their data, and why, in words
    templates: tuple[TemplateRecord, ...] = ()  # each one's name, steps, build time, size


@dataclass
class Rerun:
    """A round run again because one of its runs looked disturbed; its runs are kept
    here and left out of every figure."""

    segment: int
    round: int
    reason: str
    runs: list[RunRecord]


@dataclass
class SegmentProgress:
    """How far a segment of the plan got: rounds run and why it stopped there."""

    index: int
    rounds: int = 0
    stopped: str = ""  # 'every comparison decided', 'a fixed count', ...
    reruns_allowed: bool = True
    under_way: int | None = None  # the round that had started when the run stopped


@dataclass
class StepOutcome:
    step: Step
    settings: dict[str, str] = field(default_factory=dict)
    runs: list[RunRecord] = field(default_factory=list)
    checks: list[CheckOutcome] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    fact_units: dict[str, str] = field(default_factory=dict)
    plans: tuple[StatementPlan, ...] | None = None  # taken after its first measured run


@dataclass
class ExperimentOutcome:
    lab: Lab
    params: RunParams
    started_at: str
    duration_s: float
    steps: list[StepOutcome]
    target: dict[str, Any]
    variables: dict[str, str]
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (step, why)
    plan: Plan | None = None
    segments: list[SegmentProgress] = field(default_factory=list)
    reruns: list[Rerun] = field(default_factory=list)
    time: TimeSpent = field(default_factory=TimeSpent)
