"""Perform the workload of one run: a pgbench run (after a warm-up run of its own,
with a second pgbench beside it when the step has one), timed SQL phases, or a probe
timed from Python; and turn what it did into the lab's metric.

A pgbench run is *detailed* or *quiet*. A detailed run keeps pgbench's transaction
log and per-statement report (`-l -r`): latency percentiles, per-statement
latencies, the per-second series and its stall check. That costs pgbench a clock
read per transaction and per statement, about 2% of a client-bound workload's
throughput (bench/harness_cost.py), so by default only the first round's runs are
detailed (`--latencies first`); every step's run in a round is detailed or quiet
alike, so the comparison within a round stays fair."""

from __future__ import annotations

import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .. import probes
from ..analysis.noise import contamination
from ..errors import BenchError, LabError
from ..lab.spec import MetricSource, Phase, PhaseAction, Step
from ..model.outcomes import RunRecord
from ..observe.observer import Observer
from ..params import is_detailed
from ..pgbench.background import BackgroundRun
from ..pgbench.command import PgbenchSpec, ScriptRef
from ..pgbench.record import PgbenchResult
from ..pgbench.runner import run_pgbench
from ..pgbench.transaction_log import trusted_rates
from ..probes.base import ProbeContext
from ..store import save_raw
from . import nodes
from .context import RunContext
from .nodes import Node

DUMP_FILE = "dataset.dump"
LATENCY_SAMPLES = 20_000
FIRST_RUN_LOG_RATE = 0.1
NODE_SEED_STEP = 1000  # the pgbench seeds of a run's nodes: seed, seed + 1000, ...


def script_dir(scripts: tuple[ScriptRef, ...]) -> Path:
    """pgbench runs in its scripts' folder, so `\\include` and relative paths work."""
    for s in scripts:
        if s.path is not None:
            return s.path.parent
    return Path.cwd()


def pgbench_run(
    ctx: RunContext,
    step: Step,
    *,
    seconds: int | None,
    random_seed: int,
    raw_name: str | None,
    detailed: bool = True,
    expected_tps: float = 0.0,
    node: Node | None = None,
    cancel: threading.Event | None = None,
) -> PgbenchResult:
    """One pgbench run of `step` for `seconds` (None: the step's fixed transaction
    count); a detailed run keeps its transaction log and per-statement report. On a
    `node` of a cluster, it runs there with the node's share of the clients."""
    clients, threads = (node.clients, node.threads) if node else ctx.clients_threads(step)
    on_standby = node is not None and node.target is not ctx.target
    log_name = f"pgbench_log_{node.name}" if node else "pgbench_log"
    spec = PgbenchSpec(
        scripts=step.scripts,
        mode=step.mode,
        clients=clients,
        threads=threads,
        duration_s=seconds,
        transactions=step.transactions if seconds is None else None,
        variables=ctx.step_variables(step),
        extra_args=(*step.pgbench_args, f"--random-seed={random_seed}"),
        log_prefix=ctx.run_dir / "raw" / log_name if detailed else None,
        log_sampling_rate=_log_sampling_rate(step, expected_tps, seconds),
        report_statements=detailed,
    )
    limit = (spec.duration_s * 3 + 120) if spec.duration_s else None
    try:
        result = run_pgbench(
            ctx.pgbench(),
            spec,
            node.target.client_env() if node and on_standby else ctx.client_env(step),
            cwd=script_dir(step.scripts),
            timeout_s=limit,
            cancel=cancel,
        )
    except BenchError as e:
        if node is None:
            raise
        raise BenchError(f"on {node.name}: {e}") from e
    if raw_name and node:
        raw_name = f"{raw_name}-{node.name}"
    if raw_name:
        save_raw(
            ctx.run_dir,
            f"{raw_name}.pgbench.txt",
            f"$ {' '.join(result.args)}\n\n{result.stdout}\n--- stderr ---\n{result.stderr}",
        )
    return result


def _log_sampling_rate(step: Step, expected_tps: float, seconds: int | None) -> float:
    """Log about LATENCY_SAMPLES transactions per run, for the percentiles and the
    per-second series: logging every one of 20k transactions a second costs a
    client-bound pgbench about 4% of its throughput. The rate comes from the step's
    warm-up or its last run; with nothing to go by, it logs 10% of its transactions:
    enough lines per second to judge its seconds from 500 tx/s up, and at 20k tx/s a
    log of 2,000 lines a second."""
    expected = step.transactions or expected_tps * (seconds or 0)
    if not expected:
        return FIRST_RUN_LOG_RATE
    if expected <= LATENCY_SAMPLES:
        return 1.0
    return max(LATENCY_SAMPLES / expected, 0.0001)


def background(ctx: RunContext, step: Step, seconds: int | None) -> BackgroundRun:
    """A second pgbench alongside the timed run, when the step has one."""
    bg = step.background
    if bg is None or seconds is None:
        return BackgroundRun(None)
    spec = PgbenchSpec(
        scripts=bg.scripts,
        mode=bg.mode,
        clients=bg.clients,
        threads=1,
        duration_s=seconds,
        variables=ctx.step_variables(step),
        extra_args=(f"--rate={bg.rate:g}",) if bg.rate else (),
        report_statements=False,
    )
    return BackgroundRun(
        lambda cancel: run_pgbench(
            ctx.pgbench(),
            spec,
            ctx.client_env(step),
            cwd=script_dir(bg.scripts),
            timeout_s=seconds * 3 + 120,
            cancel=cancel,
        )
    )


def metric_value(ctx: RunContext, step: Step, tps: float) -> float:
    """The lab's metric for one pgbench run: its measured rate times the step's units
    per transaction, or the lab's metric SQL."""
    metric = ctx.lab.metric
    if metric.source is MetricSource.SQL:
        assert metric.sql is not None
        text = ctx.psql().value(metric.sql, ctx.step_variables(step), what="metric SQL")
        try:
            return float(text)
        except ValueError:
            raise LabError(f"metric SQL returned {text!r}, not a number") from None
    return tps * step.per_transaction


def probe_context(ctx: RunContext, step: Step) -> ProbeContext:
    return ProbeContext(
        target=ctx.target,
        duration_s=float(ctx.params.duration_s),
        args=step.probe_args,
        redis_url=ctx.params.redis_url,
        standbys=ctx.standbys,
    )


def run_phases(
    ctx: RunContext, step: Step, phases: list[Phase], observer: Observer | None = None
) -> list[tuple[str, float]]:
    """Run `phases` in order; return each one's name and wall-clock seconds. With the
    run's `observer`, each phase's waits and WAL are its own."""
    variables = ctx.step_variables(step)
    timings: list[tuple[str, float]] = []
    for phase in phases:
        ctx.display.phase_started(phase.name)
        with observer.phase(phase.name) if observer else nullcontext():
            if phase.action is PhaseAction.RESTORE:
                seconds = restore(ctx, step)
            else:
                assert phase.sql is not None
                seconds = ctx.psql().timed(
                    phase.sql.read_text(),
                    variables,
                    what=f"step {step.name}: phase {phase.name}",
                    cwd=phase.sql.parent,
                )
        ctx.display.phase_finished(phase.name, seconds)
        timings.append((phase.name, seconds))
    return timings


def restore(ctx: RunContext, step: Step) -> float:
    """pg_restore of the dump taken after setup; the phase before empties the database."""
    dump = ctx.run_dir / DUMP_FILE
    if not dump.exists():
        raise LabError(f"step {step.name}: a restore phase needs 'dump = true' in [dataset]")
    target = ctx.target
    args = ["--no-owner", f"--dbname={target.conninfo()['dbname']}", str(dump)]
    tolerated = None
    if target.server_version_num < 170000 <= target.binaries.major * 10000:
        # pg_restore 17+ begins with SET transaction_timeout, which older servers do
        # not know: let it go on past that one error, and only that one
        tolerated = "transaction_timeout"
    else:
        args.insert(0, "--exit-on-error")
    started = time.monotonic()
    ctx.psql().program("pg_restore", args, what=f"step {step.name}: restore", tolerated=tolerated)
    return time.monotonic() - started


class Workload(Protocol):
    """What a timed run of a step does: pgbench, timed SQL phases, or a probe."""

    def expected_seconds(self) -> float | None:
        """How long the measured part should last, where it is known in advance."""

    def prepare(self, record: RunRecord, label: str) -> None:
        """Work before the measured window (a batch's untimed phases, a warm-up)."""

    def run(self, record: RunRecord, observer: Observer, label: str, raw_name: str) -> None:
        """The measured work; fills the record's figures (a pgbench run's metric comes
        after the observer stops: the lab's metric SQL is not part of the run)."""


@dataclass
class PgbenchWorkload:
    ctx: RunContext
    step: Step
    expected_tps: dict[str, float]  # each step's last rate: how sparsely to log

    def _seconds(self) -> int | None:
        return None if self.step.transactions else self.ctx.params.duration_s

    def expected_seconds(self) -> float | None:
        seconds = self._seconds()
        return float(seconds) if seconds else None

    def prepare(self, record: RunRecord, label: str) -> None:
        """Show the run, then warm up: the step's own pgbench run, quiet, for the
        warm-up seconds; its rate says how sparsely the measured run should log."""
        seconds, warmup = self._seconds(), self.ctx.warmup_s(self.step)
        self.ctx.display.run_started(self.step, label, seconds + warmup if seconds else None)
        self.warm_up(record)

    def warm_up(self, record: RunRecord) -> None:
        """The step's own pgbench run, quiet, for the warm-up seconds."""
        seconds, warmup = self._seconds(), self.ctx.warmup_s(self.step)
        if not (seconds and warmup):
            return
        runs = self._pgbench(
            seconds=warmup,
            seed=self._seed(record) + 1,  # not the measured run's draws
            raw_name=None,
            detailed=False,
            expected=0.0,
        )
        self.expected_tps[self.step.name] = sum(r.summary.tps for _, r in runs)

    def _seed(self, record: RunRecord) -> int:
        return record.pgbench_seed or self.ctx.params.seed

    def run(self, record: RunRecord, observer: Observer, label: str, raw_name: str) -> None:
        """The measured run; in a cluster lab, each node's rate and server CPU become
        the run's facts (engine/nodes.py)."""
        step, seconds = self.step, self._seconds()
        detailed = is_detailed(self.ctx.params.latencies, record.round)
        clustered = nodes.clustered(self.ctx)
        before = nodes.cpu_readings(self.ctx) if clustered else {}
        started = time.monotonic()
        with background(self.ctx, step, seconds) as beside:
            runs = self._pgbench(
                seconds=seconds,
                seed=self._seed(record),
                raw_name=raw_name,
                detailed=detailed,
                expected=self.expected_tps.get(step.name, 0.0),
            )
        wall = time.monotonic() - started
        result, tps = runs[0][1], sum(r.summary.tps for _, r in runs)
        if clustered:
            by_node = {n.name: r.summary for n, r in runs if n is not None}
            record.facts = nodes.node_facts(
                (before, nodes.cpu_readings(self.ctx)),
                {name: summary.transactions for name, summary in by_node.items()},
                {name: summary.tps for name, summary in by_node.items()},
                wall,
                self.ctx.params.cpus,
            )
        self.expected_tps[step.name] = tps
        record.tps, record.pgbench, record.detailed = tps, result, detailed
        record.background = beside.result
        if seconds is not None:
            record.contamination = contamination(trusted_rates(result.log))

    def _pgbench(
        self,
        *,
        seconds: int | None,
        seed: int,
        raw_name: str | None,
        detailed: bool,
        expected: float,
    ) -> list[tuple[Node | None, PgbenchResult]]:
        """The step's pgbench run; in a cluster lab, one per node it runs on, all at
        once, each drawing its own keys. The first run's log gives the latencies and
        the per-second series."""
        if not nodes.clustered(self.ctx):
            run = pgbench_run(
                self.ctx,
                self.step,
                seconds=seconds,
                random_seed=seed,
                raw_name=raw_name,
                detailed=detailed,
                expected_tps=expected,
            )
            return [(None, run)]
        chosen = nodes.nodes_for(self.ctx, self.step)
        results = nodes.run_together(
            chosen,
            lambda node, cancel: pgbench_run(
                self.ctx,
                self.step,
                seconds=seconds,
                random_seed=seed + NODE_SEED_STEP * chosen.index(node),
                raw_name=raw_name,
                detailed=detailed,
                expected_tps=expected / len(chosen),
                node=node,
                cancel=cancel,
            ),
        )
        return list(zip(chosen, results, strict=True))


@dataclass
class PhaseWorkload:
    ctx: RunContext
    step: Step

    def expected_seconds(self) -> float | None:
        return None

    def prepare(self, record: RunRecord, label: str) -> None:
        self.ctx.display.run_started(self.step, label, None)
        run_phases(self.ctx, self.step, [p for p in self.step.phases if not p.timed])

    def run(self, record: RunRecord, observer: Observer, label: str, raw_name: str) -> None:
        timed = [p for p in self.step.phases if p.timed]
        record.phases = run_phases(self.ctx, self.step, timed, observer)
        record.value = sum(s for _, s in record.phases)


@dataclass
class ProbeWorkload:
    ctx: RunContext
    step: Step

    def expected_seconds(self) -> float | None:
        return float(self.ctx.params.duration_s)

    def prepare(self, record: RunRecord, label: str) -> None:
        self.ctx.display.run_started(self.step, label, self.ctx.params.duration_s)

    def run(self, record: RunRecord, observer: Observer, label: str, raw_name: str) -> None:
        assert self.step.probe is not None
        probe_ctx = probe_context(self.ctx, self.step)
        with background(self.ctx, self.step, self.ctx.params.duration_s) as beside:
            record.value = probes.get(self.step.probe).run(probe_ctx)
        record.background = beside.result
        record.facts = {**record.facts, **probe_ctx.facts}


def workload_for(ctx: RunContext, step: Step, expected_tps: dict[str, float]) -> Workload:
    if step.phases:
        return PhaseWorkload(ctx, step)
    if step.probe is not None:
        return ProbeWorkload(ctx, step)
    return PgbenchWorkload(ctx, step, expected_tps)
