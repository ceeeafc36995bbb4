"""The frozen description of a lab, as validated from its lab.toml."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..pgbench.command import QueryMode, ScriptRef


class MetricSource(StrEnum):
    """Where a lab's figure comes from."""

    TPS = "tps"  # pgbench's transactions per second (times per_transaction)
    SQL = "sql"  # a SQL count over the run's seconds
    PHASES = "phases"  # seconds of timed phases (lower is better)


class PhaseAction(StrEnum):
    """A timed phase that runs a program instead of a SQL file."""

    RESTORE = "restore"  # pg_restore of the dataset dump


@dataclass(frozen=True)
class Reported:
    """A figure the article reported for a step."""

    value: float
    unit: str
    note: str = ""
    phases: dict[str, float] = field(default_factory=dict)  # seconds per timed phase


@dataclass(frozen=True)
class Phase:
    """One timed part of a batch step: a SQL file, or pg_restore of the dataset dump."""

    name: str
    sql: Path | None = None
    action: PhaseAction | None = None
    timed: bool = True


@dataclass(frozen=True)
class Check:
    """SQL that must hold: `expect='true'` (returns true) or `'same'` (same value in every step)."""

    name: str
    sql: str
    after: str = "step"  # "step" or "run"
    expect: str = "true"


@dataclass(frozen=True)
class Fact:
    """A number measured by SQL after a step (e.g. correlation, blocks per query)."""

    name: str
    sql: str
    unit: str = ""


@dataclass(frozen=True)
class Background:
    """A second pgbench run alongside the timed one (producers beside consumers)."""

    scripts: tuple[ScriptRef, ...]
    clients: int
    rate: float | None = None
    mode: QueryMode = QueryMode.PREPARED


@dataclass(frozen=True)
class Step:
    """One configuration to measure; already merged with the step it derives from."""

    name: str
    title: str
    parent: str | None
    settings: dict[str, str]
    mode: QueryMode
    scripts: tuple[ScriptRef, ...]
    clients: int
    threads: int | None
    pgbench_args: tuple[str, ...]
    schema: tuple[Path, ...]
    phases: tuple[Phase, ...]
    fresh: bool
    per_transaction: float
    transactions: int | None
    reported: Reported | None
    changes: dict[str, Any]
    facts: tuple[Fact, ...] = ()
    note: str = ""
    sweep: str | None = None  # the sweep this step belongs to (steps NAME-cN share NAME)
    background: Background | None = None
    monitor: dict[str, str] = field(default_factory=dict)
    min_server: int | None = None  # server major version the step needs
    min_pgbench: int | None = None  # pgbench major version its scripts need
    variables: dict[str, str] = field(default_factory=dict)
    probe: str | None = None  # timed by a Python probe (pgopt.probes) instead of pgbench
    probe_args: dict[str, Any] = field(default_factory=dict)
    pooler: str | None = None  # pgbench connects through this pooler (servers/pooler.py)
    nodes: str = "primary"  # where pgbench runs: the primary, the standbys, or all of them
    standby_settings: dict[str, str] = field(default_factory=dict)  # on each hot standby
    # starts a family of comparisons: compared with no step before it, and the baseline
    # of the steps that derive from it (a lab whose steps measure different workloads)
    baseline: bool = False
    unit: str | None = None  # what its figure counts, when not the lab metric's unit
    headline: tuple[str, ...] = ()  # facts a report's summary shows beside its figure
    # in an A/B across servers (two PostgreSQL versions), the server it runs on: "a"
    # or "b" (None: the lab's one server)
    server: str | None = None


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    source: MetricSource
    higher_is_better: bool
    sql: str | None = None
    margin: float = 0.03  # the smallest relative change that matters to this lab
    ceiling: str | None = None  # the step that measures the metric's ceiling, if any


@dataclass(frozen=True)
class RunDefaults:
    clients: int
    threads: int | None
    duration_s: int
    reps: int | None  # None: sequential looks (`reps = "auto"`)
    warmup_s: int
    scale: float
    restart: bool = False  # restart the server before every timed run
    steps: tuple[str, ...] = ()  # [quick] only: the steps a quick run shows (empty: all)


@dataclass(frozen=True)
class Dataset:
    variable: str | None
    size: int
    min_size: int
    setup: tuple[Path, ...]
    variables: dict[str, str]
    dump: bool = False
    contention_table: str | None = None

    def size_at(self, scale: float) -> int:
        return max(self.min_size, round(self.size * scale))


@dataclass(frozen=True)
class SourceFigures:
    """One source statement's totals from its pg_stat_statements, as replayed under
    the tag `name`."""

    name: str
    query: str
    calls: int
    total_ms: float
    rows: int
    blocks: int  # shared blocks hit and read
    share: float  # of the source's execution time
    unverified: str = ""  # why the replay's work on it cannot be checked (a guess)
    blocks_read: int = 0  # of `blocks`, read into shared buffers: the cache's misses
    values_from_data: bool = False  # a column's values drawn from the data's statistics
    max_ms: float = 0.0  # the source's slowest call


@dataclass(frozen=True)
class ReplaySpec:
    """What a replay of a source's workload is measured against (pgopt ab
    --synthesize): the source's statements, what was not replayed, and how the
    source's clients ran them (None: not known)."""

    statements: tuple[SourceFigures, ...]
    replayed_share: float
    dropped_writes: tuple[tuple[str, str, float], ...]  # (query, why, share of time)
    statements_per_commit: float | None
    clients: int | None
    protocol: str | None
    replay_clients: int
    replay_protocol: str
    per_commit_from: str = ""  # where the source's statements a commit came from
    clients_from: str = ""  # where the source's clients came from
    clients_given: bool = False  # the replay's clients are the user's (--clients, ab.toml)
    clients_estimated: int | None = None  # where unknown, about the fewest at once (kept)
    protocol_given: bool = False  # the replay's protocol is the user's (a variant's mode)
    database_share: float | None = None  # of the source's busy sessions' time
    database_share_from: str = ""
    values_from: str = ""  # where the replay's values came from
    host_busy: float | None = None  # the source's machine's CPUs over the watch, 0 to 1
    database_cpu_share: float | None = None  # the source server's share of that


@dataclass(frozen=True)
class DataCopy:
    """The user's data, copied before the lab started (pgopt ab): how long it took,
    how big the source was, and how it was copied; a physical copy's `database` is the
    copy of the source's on the server, which the lab's data starts as."""

    seconds: float
    bytes: int
    how: str
    kind: str = "logical"  # or "physical": pg_basebackup, as old as the source
    database: str | None = None


@dataclass(frozen=True)
class Timing:
    """A lab's own figures for `--dry-run`'s estimate, measured at scale 1 on a 2-core
    machine and taken as linear in the scale: the dataset's setup, and one run of a
    lab timed by phase (a pgbench run lasts its duration)."""

    setup_s: float = 0.0
    run_s: float | None = None


@dataclass(frozen=True)
class Lab:
    name: str
    path: Path
    title: str
    seed: str
    description: str
    dataset: Dataset
    metric: Metric
    defaults: RunDefaults
    quick: RunDefaults
    steps: tuple[Step, ...]
    checks: tuple[Check, ...] = field(default=())
    standbys: int = 0  # hot standbys of the primary the lab needs ([cluster])
    shards: int = 0  # servers its data is spread over through postgres_fdw ([cluster])
    shard_setup: tuple[Path, ...] = ()  # SQL run on each shard before the dataset
    timing: Timing = field(default_factory=Timing)
    replay: ReplaySpec | None = None  # a replay of a source's workload: its fidelity
    copy: DataCopy | None = None  # the user's data, copied before the lab (pgopt ab)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)

    @property
    def baseline(self) -> Step:
        return self.steps[0]
