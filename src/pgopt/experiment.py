"""The engine: run a lab's steps with repetitions, interleaved where fair, and keep
every sample.

Steps are grouped into segments. A step that changes the schema (CLUSTER, a new
table layout) starts a new segment, because its change would leak into the
steps around it; within a segment, runs are interleaved A B A B so drift on a
noisy machine hits every step alike. Steps marked `fresh` re-create their data
before every run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path

from psycopg import sql

from . import guards, machine, probes, stats
from .errors import LabError
from .lab import expressions
from .lab.spec import Check, Lab, Phase, Step
from .monitor import SqlMonitor
from .observe import Observer
from .outcomes import CheckOutcome, Display, ExperimentOutcome, RunRecord, StepOutcome
from .params import RunParams, select_steps
from .pgbench.background import BackgroundRun
from .pgbench.command import PgbenchSpec, ScriptRef
from .pgbench.runner import PgbenchResult, run_pgbench
from .psql import Psql
from .store import save_raw
from .target.base import Target

DUMP_FILE = "dataset.dump"
LATENCY_SAMPLES = 20_000


def facts_over_runs(runs: list[RunRecord]) -> dict[str, str]:
    """Each fact's median over the runs when every run gave a number, else the
    last run's value."""
    out: dict[str, str] = {}
    for name in runs[-1].facts if runs else {}:
        values = [r.facts.get(name, "") for r in runs]
        try:
            numbers = [float(v) for v in values]
        except ValueError:
            out[name] = values[-1]
            continue
        middle = stats.median(numbers)
        out[name] = str(int(middle)) if middle.is_integer() else f"{middle:.6g}"
    return out


def segments(steps: list[Step]) -> list[list[Step]]:
    """Split steps where a step changes the schema; each part may be interleaved."""
    out: list[list[Step]] = []
    for step in steps:
        if not out or (step.schema and not step.fresh):
            out.append([step])
        else:
            out[-1].append(step)
    return out


def interleaved(segment: list[Step], reps: int) -> Iterator[tuple[int, Step]]:
    """A B A B ...: every step's rep r before any step's rep r+1."""
    for rep in range(1, reps + 1):
        for step in segment:
            yield rep, step


class Experiment:
    def __init__(
        self, lab: Lab, params: RunParams, target: Target, run_dir: Path, display: Display
    ) -> None:
        self.lab = lab
        self.params = params
        self.target = target
        self.run_dir = run_dir
        self.display = display
        self.variables = self._variables()
        self._run_counter = 0
        self._started = datetime.now(UTC)
        self._t0 = time.monotonic()
        self._outcomes: dict[str, StepOutcome] = {}
        self.__observer: Observer | None = None
        self._skipped: list[dict[str, str]] = []
        self._restart_refused = False
        self._warm_tps: dict[str, float] = {}

    def _variables(self) -> dict[str, str]:
        """The dataset's size variable, `scale`, and the lab's variables, which may be
        computed from those (`keys = "{rows // 10000}"`)."""
        ds = self.lab.dataset
        names: dict[str, float] = {"scale": self.params.scale}
        if ds.variable:
            names[ds.variable] = ds.size_at(self.params.scale)
        out = {k: expressions.expand(v, names) for k, v in ds.variables.items()}
        out["scale"] = f"{self.params.scale:g}"
        if ds.variable:
            out[ds.variable] = str(ds.size_at(self.params.scale))
        return out

    def step_variables(self, step: Step) -> dict[str, str]:
        return {**self.variables, **step.variables, "clients": str(self.clients(step))}

    def settings(self, step: Step) -> dict[str, str]:
        """The step's settings with machine and dataset figures filled in
        (`{ram_mb // 4}MB`, `{16 * scale}GB`)."""
        names = {
            "ram_mb": self.params.ram_bytes / 2**20,
            "cpus": float(machine.cpu_count()),
            "scale": self.params.scale,
        }
        return expressions.resolve(step.settings, names)

    def clients(self, step: Step) -> int:
        """--clients overrides every step's clients, except within a client sweep."""
        if step.sweep is not None:
            return step.clients
        return self.params.clients or step.clients

    def clients_threads(self, step_name: str) -> tuple[int, int]:
        """pgbench clients and threads: threads default to min(clients, cores), at most 2."""
        step = self.lab.step(step_name)
        clients = self.clients(step)
        return clients, max(1, min(step.threads or min(clients, 2), clients))

    # -- the whole lab -------------------------------------------------------

    def run(self) -> ExperimentOutcome:
        steps = [s for s in select_steps(self.lab, list(self.params.steps)) if self._supported(s)]
        if not steps or steps[0] is not self.lab.baseline:
            reason = self._skipped[0]["reason"] if self._skipped else "not selected"
            raise LabError(f"the baseline step cannot run on this server: {reason}")
        self._outcomes = {s.name: StepOutcome(s, self.settings(s)) for s in steps}
        try:
            if not all(s.fresh for s in steps):
                self.setup_dataset()
            for segment in segments(steps):
                self._run_segment(segment, self._outcomes)
        finally:
            # the dataset dump is only the restore phases' input, and it is big
            (self.run_dir / DUMP_FILE).unlink(missing_ok=True)
        self._compare_same_checks(list(self._outcomes.values()))
        return self.outcome()

    def _supported(self, step: Step) -> bool:
        major = self.target.server_version_num // 10000
        reason = self.target.unsupported(self.settings(step))
        if step.probe is not None:
            reason = reason or probes.get(step.probe).unavailable(self._probe_context(step))
        if step.min_server is not None and major < step.min_server:
            reason = f"needs PostgreSQL {step.min_server} or later; this server is {major}"
        client = self.target.binaries.major
        if step.min_pgbench is not None and client < step.min_pgbench:
            reason = f"needs pgbench {step.min_pgbench} or later; this pgbench is {client}"
        if reason is None:
            return True
        self.display.message(f"skipping step {step.name}: {reason}")
        self._skipped.append({"name": step.name, "reason": reason})
        return False

    def outcome(self) -> ExperimentOutcome:
        """What has been measured so far: everything after `run`; after an error or an
        interruption, the finished runs of the steps that have any."""
        return ExperimentOutcome(
            lab=self.lab,
            params=self.params,
            started_at=self._started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            duration_s=time.monotonic() - self._t0,
            steps=[o for o in self._outcomes.values() if o.runs],
            target=self.target.describe(),
            variables=self.variables,
            skipped=self._skipped,
        )

    def setup_dataset(self, step: Step | None = None) -> None:
        """Run the lab's setup files: once for the lab, or quietly before each run of a
        fresh step (with that step's variables)."""
        ds = self.lab.dataset
        if not ds.setup:
            return
        if step is None:
            size = f" ({ds.variable} = {self.variables[ds.variable]})" if ds.variable else ""
            self.display.message(f"setting up the dataset{size}")
        t0 = time.monotonic()
        variables = self.step_variables(step) if step else self.variables
        for path in ds.setup:
            self._psql().run_file(path, variables, what="setup file")
        if step is not None:
            return
        if ds.dump:
            self._psql().program(
                "pg_dump",
                ["--format=custom", "--file", str(self.run_dir / DUMP_FILE)],
                what="dataset dump",
            )
        self.display.message(f"dataset ready in {time.monotonic() - t0:.1f}s")

    def _run_segment(self, segment: list[Step], outcomes: dict[str, StepOutcome]) -> None:
        first = segment[0]
        if first.schema and not first.fresh:
            self.target.apply_settings(self.settings(first))
            self._apply_schema(first)
        if self.params.warmup_s > 0:
            for step in segment:
                # fixed-count runs (`transactions`) stay exact: no warm-up adds rows
                timed_by_pgbench = not step.phases and step.probe is None
                if not step.fresh and timed_by_pgbench and step.transactions is None:
                    self._warm_up(step)
        for rep, step in interleaved(segment, self.params.reps):
            outcomes[step.name].runs.append(self._timed_run(step, rep))
        for step in segment:
            outcome = outcomes[step.name]
            # facts and checks of a step are measured under that step's settings
            self.target.apply_settings(self.settings(step))
            outcome.checks.extend(self._checks(step, "step"))
            if step.scripts and not step.phases:
                failed = sum(r.pgbench.summary.failed for r in outcome.runs if r.pgbench)
                outcome.checks.append(
                    CheckOutcome(
                        "no transaction failed",
                        failed == 0,
                        "" if failed == 0 else f"{failed} failed transactions",
                    )
                )
            # a fresh step's data lives only until the next run: its facts were
            # measured after each of its runs
            facts = facts_over_runs(outcome.runs) if step.fresh else self._facts(step)
            outcome.facts.update(facts)
            outcome.fact_units.update({f.name: f.unit for f in step.facts if f.unit})

    def _apply_schema(self, step: Step) -> None:
        for path in step.schema:
            self.display.message(f"{step.name}: applying {path.name}")
            self._psql().run_file(
                path,
                self.step_variables(step),
                what=f"step {step.name}: schema file",
            )

    # -- one run -------------------------------------------------------------

    def _prepare(self, step: Step, *, timed: bool = False) -> None:
        changes = self.target.apply_settings(self.settings(step))
        if timed and self.params.restart and not any(c.needs_restart for c in changes):
            self._restart_for_run()
        if step.fresh:
            self.setup_dataset(step)
            self._apply_schema(step)

    def _restart_for_run(self) -> None:
        """The lab's `restart = true`: a fresh postmaster for every timed run."""
        if self.target.restart_for_run() or self._restart_refused:
            return
        self._restart_refused = True
        self.display.message(
            "this lab restarts the server before every run; pgopt never restarts "
            "a server it did not start, so here the runs follow each other without it"
        )

    def _warm_up(self, step: Step) -> None:
        self._prepare(step)
        label = "warm-up"
        self.display.run_started(step, label, self.params.warmup_s)
        result = self._pgbench(
            step, duration_s=self.params.warmup_s, transactions=None, raw_name=None
        )
        self._warm_tps[step.name] = result.summary.tps
        self.display.run_finished(
            step, label, result.summary.tps * step.per_transaction, self.lab.metric.unit
        )

    def _timed_run(self, step: Step, rep: int) -> RunRecord:
        self._prepare(step, timed=True)
        label = f"rep {rep}/{self.params.reps}"
        started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        contention = self._contention_warning(step)
        monitor = SqlMonitor(self.target, step.monitor)
        if step.phases:
            self.display.run_started(step, label, None)
            self._run_phases(step, [p for p in step.phases if not p.timed])
        with self._observer().run() as observation, monitor:
            if step.phases:
                timed = [p for p in step.phases if p.timed]
                timings = self._run_phases(step, timed, observed=True)
                record = RunRecord(step.name, rep, sum(s for _, s in timings), phases=timings)
            elif step.probe is not None:
                self.display.run_started(step, label, self.params.duration_s)
                value = probes.get(step.probe).run(self._probe_context(step))
                record = RunRecord(step.name, rep, value)
            else:
                duration = None if step.transactions else self.params.duration_s
                self.display.run_started(step, label, duration)
                with self._background(step, duration) as background:
                    result = self._pgbench(
                        step,
                        duration_s=duration,
                        transactions=step.transactions,
                        raw_name=f"{step.name}-rep{rep}",
                    )
                record = RunRecord(step.name, rep, 0.0, tps=result.summary.tps, pgbench=result)
                record.background = background.result
        record.monitor = monitor.series
        if monitor.error:
            observation.problems.append(f"monitor stopped: {monitor.error}")
        if record.pgbench is not None:
            record.value = self._metric_value(step, record.pgbench)
        record.started_at = started_at
        record.observation = observation
        record.warnings = self._run_warnings(record, contention)
        record.checks = self._checks(step, "run")
        if step.fresh:
            record.facts = self._facts(step)
        self.display.run_finished(step, label, record.value, self.lab.metric.unit)
        return record

    def _probe_context(self, step: Step) -> probes.ProbeContext:
        return probes.ProbeContext(
            target=self.target,
            duration_s=float(self.params.duration_s),
            args=step.probe_args,
            redis_url=self.params.redis_url,
        )

    def _background(self, step: Step, duration_s: int | None) -> BackgroundRun:
        """A second pgbench alongside the timed run, when the step has one."""
        bg = step.background
        if bg is None or duration_s is None:
            return BackgroundRun(None)
        spec = PgbenchSpec(
            scripts=bg.scripts,
            mode=bg.mode,
            clients=bg.clients,
            threads=1,
            duration_s=duration_s,
            variables=self.step_variables(step),
            extra_args=(f"--rate={bg.rate:g}",) if bg.rate else (),
            report_statements=False,
        )
        return BackgroundRun(
            lambda cancel: run_pgbench(
                self.target.binaries.path("pgbench"),
                spec,
                self.target.client_env(),
                cwd=self._script_dir(bg.scripts),
                timeout_s=duration_s * 3 + 120,
                cancel=cancel,
            )
        )

    def _psql(self) -> Psql:
        return Psql(self.target.binaries, self.target.client_env())

    def _observer(self) -> Observer:
        if self.__observer is None:
            self.__observer = Observer(self.target, sample_waits=self.params.sample_waits)
        return self.__observer

    def _contention_warning(self, step: Step) -> str | None:
        table = self.lab.dataset.contention_table
        if table is None:
            return None
        with self.target.connect() as conn:
            row = conn.execute(
                sql.SQL("select count(*) from {}").format(sql.Identifier(table))
            ).fetchone()
        return guards.contention_warning(int(row[0]) if row else 0, self.clients(step), table)

    def _run_warnings(self, record: RunRecord, contention: str | None) -> list[str]:
        out = [contention] if contention else []
        out += record.observation.problems
        result = record.pgbench
        if result is not None:
            out += guards.run_warnings(
                client_cpu_s=result.client_cpu_s,
                wall_s=result.wall_s,
                threads=self.clients_threads(record.step)[1],
                failed=result.summary.failed,
                checkpoints=int(record.observation.stats.get("checkpoints", 0)),
                duration_s=result.summary.duration_s,
                quick=self.params.quick,
            )
        elif record.observation.stats.get("checkpoints"):
            out.append(
                f"{record.observation.stats['checkpoints']} checkpoint(s) started "
                "inside the timed run"
            )
        return out

    def _pgbench(
        self,
        step: Step,
        *,
        duration_s: int | None,
        transactions: int | None,
        raw_name: str | None,
    ) -> PgbenchResult:
        self._run_counter += 1
        clients, threads = self.clients_threads(step.name)
        spec = PgbenchSpec(
            scripts=step.scripts,
            mode=step.mode,
            clients=clients,
            threads=threads,
            duration_s=duration_s,
            transactions=transactions,
            variables=self.step_variables(step),
            extra_args=(
                *step.pgbench_args,
                f"--random-seed={self.params.seed + self._run_counter}",
            ),
            log_prefix=self.run_dir / "raw" / "pgbench_log" if raw_name else None,
            log_sampling_rate=self._log_sampling_rate(step, duration_s, transactions),
        )
        limit = (duration_s * 3 + 120) if duration_s else None
        result = run_pgbench(
            self.target.binaries.path("pgbench"),
            spec,
            self.target.client_env(),
            cwd=self._script_dir(step.scripts),
            on_progress=lambda s: self.display.progress(s, step.per_transaction),
            timeout_s=limit,
        )
        if raw_name:
            save_raw(
                self.run_dir,
                f"{raw_name}.pgbench.txt",
                "$ "
                + " ".join(result.args)
                + "\n\n"
                + result.stdout
                + "\n--- stderr ---\n"
                + result.stderr,
            )
        return result

    def _log_sampling_rate(
        self, step: Step, duration_s: int | None, transactions: int | None
    ) -> float:
        """Log about LATENCY_SAMPLES transactions per run for the percentiles: logging
        every one of 20k transactions a second costs pgbench measurable CPU."""
        expected = transactions or (self._warm_tps.get(step.name, 0.0) * (duration_s or 0))
        if expected <= LATENCY_SAMPLES:
            return 1.0
        return max(LATENCY_SAMPLES / expected, 0.0001)

    @staticmethod
    def _script_dir(scripts: tuple[ScriptRef, ...]) -> Path:
        for s in scripts:
            if s.path is not None:
                return s.path.parent
        return Path.cwd()

    def _metric_value(self, step: Step, result: PgbenchResult) -> float:
        metric = self.lab.metric
        if metric.source == "sql":
            assert metric.sql is not None
            text = self._psql().value(
                metric.sql,
                self.step_variables(step),
                what=f"metric SQL of {step.name}",
            )
            try:
                return float(text)
            except ValueError:
                raise LabError(f"metric SQL returned {text!r}, not a number") from None
        return result.summary.tps * step.per_transaction

    def _run_phases(
        self, step: Step, phases: list[Phase], *, observed: bool = False
    ) -> list[tuple[str, float]]:
        """Run `phases` in order; return each one's name and wall-clock seconds.
        `observed` (inside the observer's run): each phase's waits and WAL are its own."""
        variables = self.step_variables(step)
        timings: list[tuple[str, float]] = []
        for phase in phases:
            self.display.phase_started(phase.name)
            with self._observer().phase(phase.name) if observed else nullcontext():
                if phase.action == "restore":
                    seconds = self._restore(step)
                else:
                    assert phase.sql is not None
                    seconds = self._psql().timed(
                        phase.sql.read_text(),
                        variables,
                        what=f"step {step.name}: phase {phase.name}",
                        cwd=phase.sql.parent,
                    )
            self.display.phase_finished(phase.name, seconds)
            timings.append((phase.name, seconds))
        return timings

    def _restore(self, step: Step) -> float:
        """pg_restore of the dump taken after setup; the phase before empties the database."""
        dump = self.run_dir / DUMP_FILE
        if not dump.exists():
            raise LabError(f"step {step.name}: a restore phase needs 'dump = true' in [dataset]")
        args = ["--no-owner", f"--dbname={self.target.conninfo()['dbname']}", str(dump)]
        tolerated = None
        if self.target.server_version_num < 170000 <= self.target.binaries.major * 10000:
            # pg_restore 17+ begins with SET transaction_timeout, which older servers do
            # not know: let it go on past that one error, and only that one
            tolerated = "transaction_timeout"
        else:
            args.insert(0, "--exit-on-error")
        started = time.monotonic()
        self._psql().program(
            "pg_restore", args, what=f"step {step.name}: restore", tolerated=tolerated
        )
        return time.monotonic() - started

    # -- checks and facts ------------------------------------------------------

    def _checks(self, step: Step, after: str) -> list[CheckOutcome]:
        return [self._check(step, c) for c in self.lab.checks if c.after == after]

    def _check(self, step: Step, check: Check) -> CheckOutcome:
        value = self._psql().value(
            check.sql,
            self.step_variables(step),
            what=f"check '{check.name}'",
        )
        if check.expect == "same":
            return CheckOutcome(check.name, True, "", value)
        passed = value.lower() in ("t", "true")
        return CheckOutcome(check.name, passed, "" if passed else f"returned {value}", value)

    def _compare_same_checks(self, outcomes: list[StepOutcome]) -> None:
        """`expect = same` checks pass only if every step saw the first step's value."""
        for check in self.lab.checks:
            if check.expect != "same":
                continue
            found: list[CheckOutcome] = []
            for outcome in outcomes:
                found += [c for c in outcome.checks if c.name == check.name]
                for run in outcome.runs:
                    found += [c for c in run.checks if c.name == check.name]
            reference = found[0].value if found else None
            for c in found:
                if c.value != reference:
                    c.passed = False
                    c.detail = f"got {c.value}, the first run got {reference}"

    def _facts(self, step: Step) -> dict[str, str]:
        out: dict[str, str] = {}
        for fact in step.facts:
            out[fact.name] = self._psql().value(
                fact.sql,
                self.step_variables(step),
                what=f"fact '{fact.name}'",
            )
        return out
