"""A round of interleaved slices: each step's run cut into pgbench runs of a few
seconds that take turns with the other steps' (issue 58).

The machine drifts: its throughput wanders over tens of seconds (docs/method.md,
"Where the noise comes from"), so two runs of 10 s measured one after the other
differ by what the machine did meanwhile. Slices of 1 s taking turns (A B, B A,
A B, ...) share that drift, and the round's ratio keeps less of it.

Every step is prepared alike, once for the round: its data (a clone of its
template, parked under a name of its own and renamed in as `pgopt_lab` at its
turns, engine/templates.py), one CHECKPOINT for all, then each step's warm-up
in the round's order. A turn applies the step's settings (nothing when they are
the same), and observes its slice as a whole run is observed. The step's run in
the round is the slices joined: their rate is the mean of theirs (each slice
runs the same seconds), their waits, statistics and server CPU added up
(pgbench/combine.py, analysis/observed.py). Every slice of the same number runs
with the same pgbench seed, a new one from one slice to the next. A segment whose
steps' data together is more than shared_buffers runs whole instead (`crowded`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from ..analysis.observed import joined_observation
from ..lab.spec import Lab, Step
from ..model.observation import Observation
from ..model.outcomes import RunRecord, StepOutcome, TimeSpent
from ..model.plan import Round, Segment
from ..observe.observer import Observer
from ..pgbench.combine import combined
from ..pgbench.record import PgbenchResult
from ..servers.base import Target
from ..servers.setting_units import in_unit, unit_bytes
from . import plan_capture, workloads
from .checks import measure_facts, run_checks
from .context import RunContext
from .plan import crowded_reason, slice_orders, slice_seed
from .run_warnings import contention_warning, run_warnings
from .templates import DataTemplates


class RoundHost(Protocol):
    """What a sliced round needs of the experiment that runs it."""

    ctx: RunContext
    lab: Lab
    target: Target

    def use(self, step: Step) -> None: ...
    def templates(self) -> DataTemplates | None: ...
    def observer_once(self) -> Observer: ...
    def server_cpu_s(self) -> float | None: ...
    def outcome_of(self, step: Step) -> StepOutcome: ...
    @property
    def time_spent(self) -> TimeSpent: ...
    @property
    def expected_tps(self) -> dict[str, float]: ...


@dataclass
class _Slices:
    """One step's slices so far."""

    results: list[PgbenchResult] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    server_cpu_s: list[float | None] = field(default_factory=list)


def crowded(host: RoundHost, segment: Segment) -> str:
    """Why `segment`'s rounds run whole though they could be sliced, or '': its steps'
    data, all live at once in a sliced round, is more than shared_buffers (the steps'
    own value where they set one, alike in a sliced segment; else the server's):
    engine/plan.py's crowded_reason. Known once the data is built."""
    templates = host.templates()
    if not segment.slice_s or templates is None:
        return ""
    steps = [host.lab.step(n) for n in segment.steps]
    given = host.ctx.settings(steps[0]).get("shared_buffers")
    if given is not None:  # in shared_buffers' unit, blocks of 8kB, where it has none
        shared = int((in_unit(given, "8kB") or 0) * (unit_bytes("8kB") or 0))
    else:
        with host.target.connect(host.target.admin_database) as conn:
            row = conn.execute("select pg_size_bytes(current_setting('shared_buffers'))").fetchone()
        shared = int(row[0]) if row else 0
    return crowded_reason(templates.live_bytes(steps), shared)


def run_sliced_round(
    host: RoundHost, segment: Segment, planned: Round, label: str
) -> list[RunRecord]:
    """Every step of `planned` in its slices; one record a step, in the round's order."""
    ctx = host.ctx
    steps = [host.lab.step(name) for name in planned.order]
    started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = time.monotonic()
    templates = host.templates()
    if templates is not None:
        templates.start_round(steps)
    _turn(host, steps[0], templates)
    host.target.settle()  # one CHECKPOINT, after every step's data is made
    host.time_spent.prepare_s += time.monotonic() - t0
    host.time_spent.runs += len(steps)
    slice_s = segment.slice_s
    ctx.display.run_started(
        steps[0],
        f"{label}: {', '.join(planned.order)}, {planned.slices} slices of {slice_s}s each",
        float((slice_s * planned.slices + ctx.warmup_s(steps[0])) * len(steps)),
    )
    records = {
        step.name: RunRecord.planned(step.name, segment.index, planned, position, started_at)
        for position, step in enumerate(steps, 1)
    }
    measuring = time.monotonic()
    for step in steps:
        _turn(host, step, templates)
        workloads.PgbenchWorkload(ctx, step, host.expected_tps).warm_up(records[step.name])
    slices = {step.name: _Slices() for step in steps}
    base = f"s{segment.index + 1}r{planned.number}"
    for number, turn in enumerate(slice_orders(planned.order, planned.slices), 1):
        seed = slice_seed(planned.pgbench_seed, number)
        for name in turn:
            step = host.lab.step(name)
            _turn(host, step, templates)
            _one_slice(host, step, slice_s, seed, f"{name}-{base}-slice{number}", slices[name])
    host.time_spent.measure_s += time.monotonic() - measuring
    for step in steps:
        _turn(host, step, templates)
        _finish(host, step, records[step.name], slices[step.name])
        shown = f"{label}, {planned.slices} slices"
        ctx.display.run_finished(step, shown, records[step.name].value, _unit(host.lab, step))
    return [records[step.name] for step in steps]


def _turn(host: RoundHost, step: Step, templates: DataTemplates | None) -> None:
    """`step`'s data as `pgopt_lab` and its settings on the server."""
    host.use(step)
    if templates is not None:
        templates.use(step)
        host.ctx.client_options = templates.client_options()
    host.target.apply_settings(host.ctx.settings(step))


def _one_slice(
    host: RoundHost, step: Step, seconds: int, seed: int, raw_name: str, into: _Slices
) -> None:
    cpu_before = host.server_cpu_s()
    with host.observer_once().run(float(seconds)) as observation:
        result = workloads.pgbench_run(
            host.ctx,
            step,
            seconds=seconds,
            random_seed=seed,
            raw_name=raw_name,
            detailed=False,
            expected_tps=host.expected_tps.get(step.name, 0.0),
        )
    cpu_after = host.server_cpu_s()
    into.results.append(result)
    into.observations.append(observation)
    into.server_cpu_s.append(
        None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    )


def _finish(host: RoundHost, step: Step, record: RunRecord, slices: _Slices) -> None:
    """The step's record of the round: its slices joined, then the checks and facts of
    its data as the round left it."""
    ctx = host.ctx
    result = combined(slices.results)
    record.pgbench, record.detailed = result, False
    record.tps = result.summary.tps
    record.slice_tps = [round(r.summary.tps, 3) for r in slices.results]
    host.expected_tps[step.name] = record.tps
    record.value = workloads.metric_value(ctx, step, record.tps)
    record.observation = joined_observation(slices.observations)
    cpus = slices.server_cpu_s
    if None not in cpus:
        record.server_cpu_s = round(sum(c for c in cpus if c is not None), 3)
    plan_capture.take_once(host.target, host.outcome_of(step), record.observation.stats)
    table = host.lab.dataset.contention_table
    contention = contention_warning(host.target, table, ctx.clients(step))
    threads = ctx.clients_threads(step)[1]
    record.warnings = run_warnings(record, contention, threads, quick=ctx.params.quick)
    record.checks = run_checks(ctx, step, "run")
    if step.fresh:
        record.facts = {**record.facts, **measure_facts(ctx, step)}


def _unit(lab: Lab, step: Step) -> str:
    return step.unit or lab.metric.unit
