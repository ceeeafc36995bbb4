"""Carry out a lab's plan on a target: rounds of runs, each prepared alike, with
re-runs of disturbed rounds and sequential looks; keep every measurement.

Every timed run gets the same preparation whatever its step: the step's settings,
a fresh postmaster where the segment restarts before every run, fresh data for a
`fresh` step, then a CHECKPOINT; a quiet pgbench warm-up, then the measured pgbench
run with the round's random seed, detailed or quiet as `--latencies` says for the
round. A round with a disturbed run (in a detailed run, a second below half the
run's median) is run again once; when the re-run is disturbed too, the
workload is bursty by nature and the segment re-runs nothing more.

Across servers (two PostgreSQL versions, servers.py), each step is set up,
prepared and measured on its own server, the only one under load while it runs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from .. import probes, stopping
from ..analysis.comparisons import lab_decisions
from ..analysis.verdicts import Rule
from ..errors import TargetError, first_line
from ..lab.spec import Lab, Step
from ..model.outcomes import (
    ExperimentOutcome,
    Rerun,
    RunRecord,
    SegmentProgress,
    StepOutcome,
    TimeSpent,
)
from ..model.plan import Plan, Round, Segment
from ..observe.monitor import SqlMonitor, series_facts
from ..observe.observer import Observer
from ..params import RunParams, select_steps
from ..report.fields import describe_across
from ..servers.base import Target
from . import companions, data_setup, nodes, plan_capture, workloads
from .checks import compare_same_checks, measure_facts, record_step_checks, run_checks
from .context import RunContext
from .display import Display
from .plan import as_whole, plan_steps
from .run_warnings import contention_warning, run_warnings
from .server_pair import Servers
from .slices import crowded, run_sliced_round
from .templates import DataTemplates


class Experiment:
    def __init__(
        self,
        lab: Lab,
        params: RunParams,
        target: Target,
        run_dir: Path,
        display: Display,
        servers: Mapping[str, Target] | None = None,
    ) -> None:
        self.ctx = RunContext(lab, params, target, run_dir, display)
        self.lab, self.params, self.target, self.display = lab, params, target, display
        self._servers = Servers(target, servers)
        self.ctx.client_binaries = self._servers.clients()
        self._started = datetime.now(UTC)
        self._t0 = time.monotonic()
        self._outcomes: dict[str, StepOutcome] = {}
        self._observers: dict[int, Observer] = {}  # by id() of the server
        self._skipped: list[tuple[str, str]] = []
        self._restart_refused = False
        self.expected_tps: dict[str, float] = {}  # each step's last rate: how sparsely to log
        self._plan: Plan | None = None
        self._progress: list[SegmentProgress] = []
        self._reruns: list[Rerun] = []
        self._in_round: list[RunRecord] = []  # the round under way: its finished runs
        self._non_default: dict[str, str] | None = None
        self._node_facts: dict[str, Any] = {}  # the standbys', the shards', the settings'
        self._templates: dict[int, DataTemplates] = {}  # the fresh steps' data, by server
        self.time_spent = TimeSpent()

    @property
    def variables(self) -> dict[str, str]:
        return self.ctx.variables

    def templates(self) -> DataTemplates | None:
        """The fresh steps' templates on the server now in use, if any."""
        return self._templates.get(id(self.target))

    def outcome_of(self, step: Step) -> StepOutcome:
        return self._outcomes[step.name]

    def use(self, step: Step) -> None:
        """Make `step`'s server the one everything that follows talks to."""
        self.target = self.ctx.target = self._servers.of(step)

    # -- the plan ----------------------------------------------------------------

    def plan(self) -> Plan:
        """Which steps run, in which rounds and orders; steps this server cannot run are
        left out with their reason."""
        if self._plan is not None:
            return self._plan
        steps = select_steps(self.lab, list(self.params.steps))
        unavailable = {}
        for step in steps:
            if step.probe is not None:
                probe_ctx = workloads.probe_context(self.ctx, step)
                reason = probes.get(step.probe).unavailable(probe_ctx)
                if reason:
                    unavailable[step.name] = reason
            if reason := companions.unavailable(self.lab, self.params, self.target, step):
                unavailable[step.name] = reason
        self._plan = plan_steps(
            self.lab, self.params, self._servers.facts(), unavailable, across=self._servers.across
        )
        for name, reason in self._plan.skipped:
            self.display.message(f"skipping step {name}: {reason}")
            self._skipped.append((name, reason))
        return self._plan

    # -- the whole lab -------------------------------------------------------------

    def run(self) -> ExperimentOutcome:
        """Carry out the plan; a database error becomes a TargetError here, at the
        boundary between pgopt and the server."""
        try:
            return self._run()
        except psycopg.Error as e:
            raise TargetError(f"database error: {first_line(e)}") from e

    def _run(self) -> ExperimentOutcome:
        plan = self.plan()
        steps = [self.lab.step(n) for seg in plan.segments for n in seg.steps]
        self._outcomes = {s.name: StepOutcome(s, self.ctx.settings(s)) for s in steps}
        if self._servers.across:
            across = self._node_facts["settings_across"] = self._servers.compare_settings()
            self.display.message(describe_across(across))
        try:
            with ExitStack() as stack:
                if self.lab.shards and steps:  # before the dataset, which spreads over them
                    self.ctx.shards = stack.enter_context(
                        companions.shards_for(self.lab, self.target, self.variables, self.display)
                    )
                    self._node_facts["shards"] = [node.describe() for node in self.ctx.shards]
                for group in self._servers.groups(steps):
                    self.use(group[0])
                    templates = data_setup.set_up(self.ctx, group, self.time_spent)
                    if templates is not None:
                        self._templates[id(self.target)] = templates
                if any(s.pooler for s in steps):
                    self.ctx.pooler_port = stack.enter_context(
                        companions.pooler_for(self.target, self.params, self.display)
                    ).port
                if self.lab.standbys and steps:
                    self.ctx.standbys = stack.enter_context(
                        companions.standbys_for(self.lab, self.params, self.target, self.display)
                    )
                    self._node_facts["standbys"] = [node.describe() for node in self.ctx.standbys]
                for segment in plan.segments:
                    self._run_segment(self._fit_slices(segment))
                for templates in self._templates.values():
                    templates.drop()
        finally:
            self._use_main()
            self.ctx.standbys = self.ctx.shards = ()  # stopped with the stack
            # the dataset dump is only the restore phases' input, and it is big
            (self.ctx.run_dir / workloads.DUMP_FILE).unlink(missing_ok=True)
        compare_same_checks(self.lab, list(self._outcomes.values()))
        self._non_default = self.target.non_default_settings()
        return self.outcome()

    def _use_main(self) -> None:
        self.target = self.ctx.target = self._servers.main

    def outcome(self) -> ExperimentOutcome:
        """What has been measured so far: everything after `run`; after an error or an
        interruption, the finished runs of the steps that have any, those of the round
        under way included (their pairs within that round are as fair as any)."""
        steps = []
        for o in self._outcomes.values():
            pending = [r for r in self._in_round if r.step == o.step.name]
            if o.runs or pending:
                steps.append(replace(o, runs=[*o.runs, *pending]) if pending else o)
        return ExperimentOutcome(
            lab=self.lab,
            params=self.params,
            started_at=self._started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            duration_s=time.monotonic() - self._t0,
            steps=steps,
            target=self._target_facts(),
            variables=self.variables,
            skipped=self._skipped,
            plan=self._plan,
            segments=self._progress,
            reruns=self._reruns,
            time=self.time_spent,
        )

    def _target_facts(self) -> dict[str, Any]:
        facts = self._servers.main.describe()
        facts.update(self._node_facts)
        if self._servers.across:
            facts["servers"] = self._servers.describe()
        if self._non_default is not None:
            facts["non_default_settings"] = self._non_default
        return facts

    # -- a segment: rounds until the plan ends or every comparison is decided -------

    def _run_segment(self, segment: Segment) -> None:
        steps = [self.lab.step(n) for n in segment.steps]
        first = steps[0]
        if first.schema and not first.fresh:
            self.use(first)
            self.target.apply_settings(self.ctx.settings(first))
            self.ctx.apply_schema(first)
        progress = SegmentProgress(segment.index)
        self._progress.append(progress)
        progress.stopped = "undecided at the last look" if segment.looks else "a fixed count"
        for planned in segment.rounds:
            progress.under_way = planned.number
            for record in self._run_round(segment, planned, progress):
                self._outcomes[record.step].runs.append(record)
            self._in_round = []
            progress.rounds, progress.under_way = planned.number, None
            if planned.number in segment.looks and self._decided(segment):
                progress.stopped = "every comparison decided"
                break
        for step in steps:
            # facts and checks of a step are measured under that step's settings
            self.use(step)
            self.target.apply_settings(self.ctx.settings(step))
            record_step_checks(self.ctx, step, self._outcomes[step.name])
        self._use_main()

    def _fit_slices(self, segment: Segment) -> Segment:
        """`segment`, run whole where its steps' data together would crowd the cache
        in slices (engine/slices.py's crowded), the plan updated to say so."""
        why = crowded(self, segment)
        if not why:
            return segment
        whole = as_whole(segment, why)
        assert self._plan is not None
        segments = tuple(whole if s is segment else s for s in self._plan.segments)
        self._plan = replace(self._plan, segments=segments)
        self.display.message(f"segment {segment.index + 1}: whole runs ({why})")
        return whole

    def _run_round(
        self, segment: Segment, planned: Round, progress: SegmentProgress
    ) -> list[RunRecord]:
        """Every step of the round, in the round's order; once more if a run was disturbed."""
        runs = self._round_runs(segment, planned, attempt=1)
        reason = next((f"{r.step}: {r.contamination}" for r in runs if r.contamination), None)
        if reason is None or not progress.reruns_allowed:
            return runs
        self._reruns.append(Rerun(segment.index, planned.number, reason, runs))
        self.display.message(f"round {planned.number} disturbed ({reason}); running it again")
        runs = self._round_runs(segment, planned, attempt=2)
        if any(r.contamination for r in runs):
            progress.reruns_allowed = False
            self.display.message(
                "disturbed again: kept, and no more re-runs in this segment "
                "(its per-second throughput is uneven by nature)"
            )
        return runs

    def _round_runs(self, segment: Segment, planned: Round, *, attempt: int) -> list[RunRecord]:
        self._in_round = []
        if planned.slices > 1:
            self._in_round = run_sliced_round(self, segment, planned, _label(planned, segment, 1))
            return list(self._in_round)
        for position, name in enumerate(planned.order, 1):
            step = self.lab.step(name)
            run = self._timed_run(step, segment, planned, position, attempt)
            self._in_round.append(run)  # kept before it is told: Ctrl-C after the line keeps it
            label = _label(planned, segment, attempt)
            self.display.run_finished(step, label, run.value, step.unit or self.lab.metric.unit)
        return list(self._in_round)

    def _decided(self, segment: Segment) -> bool:
        """Every comparison of this segment's steps has a verdict more rounds would not
        change: faster, slower or no-change."""
        decisions = lab_decisions(
            list(self._outcomes.values()),
            self.lab.steps,
            higher_is_better=self.lab.metric.higher_is_better,
            rule=Rule(self._plan.alpha if self._plan else 0.05, self.params.margin),
            only=segment.steps,
        )
        return all(d.verdict.decided for d in decisions.values())

    # -- one run ---------------------------------------------------------------------

    def _prepare(self, step: Step, *, restart: bool) -> None:
        """The same for every timed run whatever its step: a fresh step's data from its
        template, settings, a fresh postmaster where the segment asks for one, a
        CHECKPOINT."""
        self.use(step)
        templates = self.templates()
        if templates is not None:
            templates.start_run(step)
            self.ctx.client_options = templates.client_options()
        changes = self.target.apply_settings(self.ctx.settings(step))
        for node in self.ctx.standbys:
            node.apply_settings(step.standby_settings)
        if restart and not any(c.needs_restart for c in changes):
            self._restart_for_run()
        self.target.settle()

    def _restart_for_run(self) -> None:
        if self.target.restart_for_run() or self._restart_refused:
            return
        self._restart_refused = True
        self.display.message(
            "this lab restarts the server before every run; pgopt never restarts "
            "a server it did not start, so here the runs follow each other without it"
        )

    def _timed_run(
        self, step: Step, segment: Segment, planned: Round, position: int, attempt: int
    ) -> RunRecord:
        stopping.check()  # a stop requested whose exception a finalizer swallowed
        t0 = time.monotonic()
        self._prepare(step, restart=segment.restart_each_run)
        self.time_spent.prepare_s += time.monotonic() - t0
        self.time_spent.runs += 1
        label = _label(planned, segment, attempt)
        started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        table = self.lab.dataset.contention_table
        contention = contention_warning(self.target, table, self.ctx.clients(step))
        monitor = SqlMonitor(self.target, step.monitor)
        record = RunRecord.planned(step.name, segment.index, planned, position, started_at)
        workload = workloads.workload_for(self.ctx, step, self.expected_tps)
        measuring = time.monotonic()  # the warm-up too: the workload runs
        workload.prepare(record, label)
        cpu_before = self.server_cpu_s()
        observer = self.observer_once()
        with observer.run(workload.expected_seconds()) as observation, monitor:
            raw = f"{step.name}-s{segment.index + 1}r{planned.number}"
            workload.run(record, observer, label, raw + ("-again" if attempt > 1 else ""))
        self.time_spent.measure_s += time.monotonic() - measuring
        cpu_after = self.server_cpu_s()
        if cpu_before is not None and cpu_after is not None:
            record.server_cpu_s = round(cpu_after - cpu_before, 3)
        if record.tps is not None:
            record.value = workloads.metric_value(self.ctx, step, record.tps)
        record.monitor = monitor.series
        record.facts = {**record.facts, **series_facts(monitor.series)}
        if monitor.error:
            observation.problems.append(f"monitor stopped: {monitor.error}")
        record.observation = observation
        plan_capture.take_once(self.target, self._outcomes[step.name], observation.stats)
        threads = self.ctx.clients_threads(step)[1]
        record.warnings = run_warnings(record, contention, threads, quick=self.params.quick)
        record.checks = run_checks(self.ctx, step, "run")
        if step.fresh:
            record.facts = {**record.facts, **measure_facts(self.ctx, step)}
        return record

    def server_cpu_s(self) -> float | None:
        """CPU seconds the servers have used so far: the primary's and its standbys'."""
        readings = nodes.cpu_readings(self.ctx).values()
        return None if None in readings else sum(r for r in readings if r is not None)

    def observer_once(self) -> Observer:
        """The observer of the server now in use, made at its first run."""
        key = id(self.target)
        if key not in self._observers:
            self._observers[key] = Observer(self.target, sample_waits=self.params.sample_waits)
        return self._observers[key]


def _label(planned: Round, segment: Segment, attempt: int) -> str:
    """'round 2/4', 'round 2/4 again': how a run is named in the progress."""
    return f"round {planned.number}/{len(segment.rounds)}" + (" again" if attempt > 1 else "")
