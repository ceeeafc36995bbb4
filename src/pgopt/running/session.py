"""One lab run from start to end: the target, the plan, the runs, the result and its
files, keeping the runs that finished when the run stops early (an error, Ctrl-C).
Every command that runs a lab goes through `run_session`."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from ..engine.display import Display
from ..engine.execute import Experiment
from ..lab.spec import Lab, MetricSource
from ..model.result import LabResult
from ..params import RunParams
from ..report.write import write_reports
from ..result.build import build_result
from ..servers.base import Target
from ..store import write_result
from ..words import plural


@dataclass(frozen=True)
class Session:
    result: LabResult
    result_path: Path
    reports: list[Path]


def run_session(
    lab: Lab,
    params: RunParams,
    target: Target,
    run_dir: Path,
    display: Display,
    *,
    command: str,
    servers: Mapping[str, Target] | None = None,
) -> Session:
    """Run `lab` on `target` and store everything in `run_dir`; the target is started
    and stopped (or left as found) here. `servers`: an A/B across servers, each step
    on the one its `server` names (the target is one of them), each started here."""
    with ExitStack() as started:
        for server in {id(t): t for t in (target, *(servers or {}).values())}.values():
            started.enter_context(server)
        experiment = Experiment(lab, params, target, run_dir, display, servers)
        plan = experiment.plan()
        per_run = "" if lab.metric.source is MetricSource.PHASES else f" of {params.duration_s}s"
        rounds = (
            "rounds until decided (looks at 4, 6, 8, 10)"
            if plan.sequential or params.reps is None
            else plural(params.reps, "round")
        )
        scale = f", scale {params.scale:g}" if lab.dataset.variable else ""
        versions = (
            " and ".join(f"{name}: {t.server_version}" for name, t in servers.items())
            if servers
            else target.server_version
        )
        display.message(
            f"{target.kind} PostgreSQL {versions}, "
            f"{plural(sum(len(s.steps) for s in plan.segments), 'step')}, {rounds}{per_run} "
            f"in random order (seed {plan.seed}){scale}; results in {run_dir}"
        )
        try:
            result = build_result(experiment.run(), command=command)
        except BaseException as e:
            _save_partial(experiment, run_dir, e, command, display)
            raise
    path = write_result(run_dir, result)
    return Session(result, path, write_reports(run_dir, result))


def _save_partial(
    experiment: Experiment, run_dir: Path, error: BaseException, command: str, display: Display
) -> None:
    """Keep the runs that finished before an error or an interruption."""
    outcome = experiment.outcome()
    if not outcome.steps:
        return
    result = build_result(outcome, command=command, error=str(error) or type(error).__name__)
    path = write_result(run_dir, result)
    write_reports(run_dir, result)
    display.message(f"partial result (finished runs only): {path}")
