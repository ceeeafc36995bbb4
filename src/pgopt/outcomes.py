"""What the engine measured: records of runs, steps and the whole experiment.

Plain mutable dataclasses filled in as a lab runs; result.py turns them into
result.json. `Display` is what the engine tells the person watching.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .lab.spec import Lab, Step
from .observe import Observation
from .params import RunParams
from .pgbench.parse import ProgressSample
from .pgbench.runner import PgbenchResult


class Display(Protocol):
    """What the engine tells the person watching."""

    def message(self, text: str) -> None: ...
    def run_started(self, step: Step, label: str, seconds: float | None) -> None: ...
    def progress(self, sample: ProgressSample, per_transaction: float) -> None: ...
    def phase_started(self, phase: str) -> None: ...
    def phase_finished(self, phase: str, seconds: float) -> None: ...
    def run_finished(self, step: Step, label: str, value: float | None, unit: str) -> None: ...


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
    rep: int
    value: float
    tps: float | None = None
    pgbench: PgbenchResult | None = None
    phases: list[tuple[str, float]] = field(default_factory=list)
    checks: list[CheckOutcome] = field(default_factory=list)
    started_at: str = ""
    observation: Observation = field(default_factory=Observation)
    warnings: list[str] = field(default_factory=list)
    background: PgbenchResult | None = None
    monitor: dict[str, list[list[float]]] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)  # a fresh step's, after this run


@dataclass
class StepOutcome:
    step: Step
    settings: dict[str, str] = field(default_factory=dict)
    runs: list[RunRecord] = field(default_factory=list)
    checks: list[CheckOutcome] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    fact_units: dict[str, str] = field(default_factory=dict)


@dataclass
class ExperimentOutcome:
    lab: Lab
    params: RunParams
    started_at: str
    duration_s: float
    steps: list[StepOutcome]
    target: dict[str, Any]
    variables: dict[str, str]
    skipped: list[dict[str, str]] = field(default_factory=list)
