"""The result of a lab run as typed records (pgopt.lab-result/1).

Frozen dataclasses whose field names are result.json's keys. result.py builds
one `LabResult` from the measurements; the codec (model/codec.py) writes it as
JSON and reads stored files back, older ones too; reports and commands read
these records, never raw JSON. A field that older files may lack has a default
(None, or an empty value where absence and emptiness mean the same); parts whose
keys are open-ended (settings, facts, statistics, the target's description)
stay mappings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .absent import absent
from .fidelity import Fidelity
from .plans import StatementPlan
from .verdict import Verdict

Interval = tuple[float, float]


@dataclass(frozen=True)
class MetricName:
    name: str
    unit: str
    higher_is_better: bool


@dataclass(frozen=True)
class MetricSummary:
    """A step's metric over its runs: median, 95% interval, the samples."""

    median: float
    ci95: Interval
    samples: tuple[float, ...]
    name: str = ""
    unit: str = ""
    higher_is_better: bool = True
    cv: float | None = None
    rounds: int | None = absent()


@dataclass(frozen=True)
class Ratio:
    """A comparison B/A: `median` holds the estimate (the geometric-mean ratio; the
    field keeps its first name), then the evidence behind the verdict."""

    median: float
    ci95: Interval
    ci90: Interval | None = None
    rounds: int | None = None
    paired: bool | None = None
    p: float | None = None
    p_adjusted: float | None = None
    sign_flip_p: float | None = None
    cv: float | None = None
    detectable: float | None = None
    verdict: Verdict | None = None


IDENTITY = Ratio(1.0, (1.0, 1.0))  # a step against itself: the baseline's ratio


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class Latency:
    avg: float | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None


@dataclass(frozen=True)
class Statement:
    script: int
    latency_ms: float
    command: str


@dataclass(frozen=True)
class RunPhase:
    name: str
    seconds: float
    wal_bytes: int | None = absent()
    waits: dict[str, int] | None = absent()


@dataclass(frozen=True)
class CpuShare:
    """Where a step's CPU went while pgbench ran (medians over its runs): pgbench's own,
    in cores, against the threads it was given, and the server's."""

    client_cores: float
    client_threads: int
    server_cores: float | None = absent()

    @property
    def client_busy(self) -> float:
        """The share of its threads pgbench kept busy: near 1, it is the bottleneck."""
        return self.client_cores / self.client_threads if self.client_threads else 0.0


@dataclass(frozen=True)
class Run:
    """One timed run of one step."""

    rep: int
    value: float
    round: int | None = absent()
    segment: int | None = absent()
    position: int | None = absent()
    started_at: str | None = absent()
    pgbench_seed: int | None = absent()
    server_cpu_s: float | None = absent()
    contamination: str | None = absent()
    tps: float | None = absent()
    tps_whole_run: float | None = absent()
    transactions: int | None = absent()
    failed: int | None = absent()
    latency_avg_ms: float | None = absent()
    wall_s: float | None = absent()
    client_cpu_s: float | None = absent()
    threads: int | None = absent()  # pgbench's --jobs
    progress: tuple[tuple[float, float], ...] | None = absent()  # (second, tx/s) from the log
    log_sampling_rate: float | None = absent()
    detailed: bool | None = absent()  # pgbench kept its log and per-statement report
    slice_tps: tuple[float, ...] | None = absent()  # each slice's rate, in a sliced round
    statements: tuple[Statement, ...] | None = absent()
    script_transactions: tuple[int, ...] | None = absent()  # per pgbench script, in order
    phases: tuple[RunPhase, ...] | None = absent()
    background: dict[str, Any] | None = absent()
    monitor: dict[str, Any] | None = absent()
    facts: dict[str, Any] | None = absent()
    waits: dict[str, int] | None = absent()
    observer: dict[str, Any] | None = absent()
    stats: dict[str, Any] | None = absent()
    warnings: tuple[str, ...] | None = absent()


@dataclass(frozen=True)
class Phase:
    """One timed phase of a step over its runs, against the same phase in the step it
    derives from."""

    name: str
    seconds: float
    ci95: Interval | None = absent()
    samples: tuple[float, ...] | None = absent()
    waits: dict[str, float] | None = absent()
    wal_bytes: float | None = absent()
    ratio_vs_previous: Ratio | None = absent()
    verdict_vs_previous: Verdict | None = absent()
    why: str | None = absent()


@dataclass(frozen=True)
class Reported:
    """The article's own figure for a step."""

    value: float
    unit: str
    note: str = ""
    phases: dict[str, float] | None = absent()
    ratio_vs_baseline: float | None = absent()


@dataclass(frozen=True)
class Series:
    median: float
    samples: tuple[float, ...]


@dataclass(frozen=True)
class TopWait:
    wait: str
    share: float


@dataclass(frozen=True)
class StepResult:
    name: str
    title: str
    changes: dict[str, Any]
    metric: MetricSummary
    ratio_vs_baseline: Ratio  # against `baseline`: the lab's first step or its family's
    ratio_vs_previous: Ratio | None
    verdict_vs_baseline: Verdict
    verdict_vs_previous: Verdict
    checks: tuple[Check, ...]
    runs: tuple[Run, ...]
    note: str = ""
    settings: dict[str, str] | None = absent()
    clients: int | None = absent()
    compared_with: str | None = None
    baseline: str | None = absent()  # the step ratio_vs_baseline compares with
    latency_ms: Latency | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    fact_units: dict[str, str] | None = absent()
    headline: tuple[str, ...] | None = absent()  # facts the summary shows beside the rate
    warnings: tuple[str, ...] = ()
    reported: Reported | None = None
    tps: Series | None = absent()
    server_cpu_us_per_tx: Series | None = absent()
    cpu: CpuShare | None = absent()  # the client's CPU beside the server's
    phases: tuple[Phase, ...] | None = absent()
    waits: dict[str, float] | None = absent()
    wait_samples: int | None = absent()
    bottleneck: tuple[TopWait, ...] | None = absent()
    stats: dict[str, Any] | None = absent()
    why: str | None = absent()
    plans: tuple[StatementPlan, ...] | None = absent()  # its top statements' generic plans
    # an A/B across servers: the server it ran on (name, server_version, pg_bin)
    server: dict[str, Any] | None = absent()


@dataclass(frozen=True)
class VerdictRule:
    """How the verdicts were drawn, so a reader of result.json can redo them."""

    alpha: float
    sequential: bool
    margin: float
    comparisons: int
    method: str = ""
    looks: tuple[int, ...] = ()
    min_rounds: int | None = absent()
    sign_flip_from: int | None = absent()
    multiple_comparisons: str = ""


@dataclass(frozen=True)
class Segment:
    """The rounds one segment ran: their orders and pgbench seeds."""

    steps: tuple[str, ...]
    rounds: int
    orders: tuple[tuple[str, ...], ...]
    pgbench_seeds: tuple[int, ...]
    planned_rounds: int | None = absent()
    stopped: str = ""
    restart_each_run: bool = False
    why_restart: str = ""
    slice_s: int | None = absent()  # seconds of a slice in its sliced rounds (0: none)
    sliced_rounds: tuple[int, ...] | None = absent()  # the rounds whose runs were sliced
    why_whole: str | None = absent()  # why its runs were not sliced


@dataclass(frozen=True)
class PlanRecord:
    seed: int
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class SweepPoint:
    clients: int
    median: float


@dataclass(frozen=True)
class Sweep:
    """A client sweep: the metric at every client count, the best, and the knee."""

    name: str
    points: tuple[SweepPoint, ...]
    best_clients: int | None = None
    knee_clients: int | None = None


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str


@dataclass(frozen=True)
class Rerun:
    """A disturbed round that ran again: the runs it replaced."""

    segment: int
    round: int
    reason: str
    runs: tuple[Run, ...]


@dataclass(frozen=True)
class Ceiling:
    """What the lab's ceiling step measured, and how close the best other step came:
    `share` is best / ceiling, with its interval from the rounds the two shared (or
    from their runs as independent samples when they ran in different segments)."""

    step: str
    median: float
    best: str
    best_median: float
    share: float
    share_ci95: Interval
    rounds: int


@dataclass(frozen=True)
class TemplateRecord:
    """A template database a fresh step's runs started from: its steps, the seconds
    its variant's SQL and VACUUM ANALYZE took, its size."""

    name: str
    steps: tuple[str, ...]
    build_s: float
    bytes: int


@dataclass(frozen=True)
class TimeBreakdown:
    """What the run's wall time went to, in seconds. `copy_s`: the source copied
    before the lab started (pgopt ab: pg_dump); `setup_s`: the dataset's setup files
    (for ab, restoring that copy); `build_s`: each fresh step's template; `prepare_s`:
    before the timed runs (a fresh step's database from its template, settings, a
    CHECKPOINT); `measure_s`: warm-ups and timed runs; `other_s`: the rest (the
    server's start and stop, checks, reports)."""

    total_s: float
    setup_s: float
    build_s: float
    prepare_s: float
    measure_s: float
    other_s: float
    measured_share: float
    runs: int
    prepare_per_run_s: float | None = None
    copy_s: float | None = None
    copy_bytes: int | None = None
    copy_how: str = ""
    copy_kind: str | None = absent()  # "logical" (pg_dump) or "physical" (pg_basebackup)
    runs_from: str | None = None  # fresh steps: "clone" or "template"
    how: str = ""
    templates: tuple[TemplateRecord, ...] = ()


@dataclass(frozen=True)
class LabResult:
    schema: str
    lab: str
    title: str
    seed: str
    started_at: str
    duration_s: float
    target: dict[str, Any]
    machine: dict[str, Any]
    params: dict[str, Any]
    metric: MetricName
    steps: tuple[StepResult, ...]
    complete: bool
    passed: bool
    description: str = ""
    command: str = ""
    variables: dict[str, Any] = field(default_factory=dict)
    verdicts: VerdictRule | None = absent()
    plan: PlanRecord | None = None
    sweeps: tuple[Sweep, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    observer: dict[str, Any] | None = None
    reruns: tuple[Rerun, ...] = ()
    error: str | None = absent()
    ceiling: Ceiling | None = absent()
    fidelity: Fidelity | None = absent()  # a replay of a source's workload
    time: TimeBreakdown | None = absent()  # what the wall time went to (older files lack it)

    def step(self, name: str) -> StepResult:
        return next(s for s in self.steps if s.name == name)
