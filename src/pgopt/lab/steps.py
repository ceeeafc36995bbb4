"""The steps of a lab: each one read from lab.toml through the field table
(step_fields.py), merged with the step it derives from (its `from`, or the step
before it), expanded into client sweeps, its probe's arguments checked against
what the probe takes, and labelled with what it changes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import probes
from ..errors import LabError
from ..words import plural
from .spec import Metric, MetricSource, Phase, Reported, RunDefaults, Step
from .step_fields import Reading, changes_of, field_values
from .table import Table


def read_steps(
    raw_steps: list[Any], where: str, folder: Path, defaults: RunDefaults, metric: Metric
) -> tuple[Step, ...]:
    steps: list[Step] = []
    by_name: dict[str, Step] = {}
    for i, raw in enumerate(raw_steps):
        name = raw.get("name") if isinstance(raw, dict) else None
        label = f"step '{name}'" if isinstance(name, str) else f"step {i + 1}"
        t = Table(raw, f"{where}: {label}")
        name = t.text("name")
        if not name.replace("_", "").replace("-", "").isalnum():
            raise t.fail("name", "use letters, digits, '-' and '_' only")
        if name in by_name:
            raise t.fail("name", f"step {name!r} is defined twice")
        parent_name = t.text("from", steps[-1].name if steps else None)
        if parent_name is not None and parent_name not in by_name:
            raise t.fail("from", f"no earlier step named {parent_name!r}")
        parent = by_name.get(parent_name) if parent_name else None
        sweep = Table(t.table("sweep", {}), f"{t.where}: field 'sweep'")
        sweep_clients = sweep.array("clients", [])
        sweep.done()
        reading = Reading(folder, defaults, metric, parent)
        for clients in sweep_clients or [None]:
            point = _step(t, reading, name, clients)
            if point.name in by_name:
                raise t.fail("sweep", f"step {point.name!r} is defined twice")
            steps.append(point)
            by_name[point.name] = point
            if clients is not None:
                by_name.setdefault(name, point)
        t.done()
    return tuple(steps)


def _step(t: Table, r: Reading, name: str, sweep_clients: Any) -> Step:
    """The step read from `t`; with `sweep_clients`, the point NAME-cN of a client sweep."""
    values = field_values(t, r)
    if not t.has("scripts") and (
        values["probe"] is not None or r.metric.source is MetricSource.PHASES
    ):
        values["scripts"] = ()
    elif not values["scripts"]:
        raise t.fail("scripts", "needs pgbench scripts (or a probe), none to inherit")
    if r.metric.source is MetricSource.PHASES and not values["phases"]:
        raise t.fail("phases", "a lab timed by phase needs phases in its first step")
    if values["background"] is not None and values["transactions"] is not None:
        raise t.fail("background", "runs for the step's duration: not with 'transactions'")
    title = t.text("title", name.replace("_", " "))
    if sweep_clients is not None:
        if (
            isinstance(sweep_clients, bool)
            or not isinstance(sweep_clients, int)
            or sweep_clients < 1
        ):
            raise t.fail("sweep", f"clients must be positive integers, got {sweep_clients!r}")
        values["clients"] = sweep_clients
        title = f"{title}, {plural(sweep_clients, 'client')}"
    probe = probes.get(values["probe"]) if values["probe"] else None
    if probe is not None:
        try:
            values["probe_args"] = probes.read_args(values["probe"], probe, values["probe_args"])
        except LabError as e:
            raise t.fail("probe_args", str(e)) from None
    elif values["probe_args"]:
        raise t.fail("probe_args", "goes with a probe (field 'probe'), and this step has none")
    step = Step(
        name=name if sweep_clients is None else f"{name}-c{sweep_clients}",
        title=title,
        parent=r.parent.name if r.parent else None,
        reported=_reported(t, r.metric.unit, values["phases"]),
        changes={},
        note=t.text("note", "").strip(),
        sweep=name if sweep_clients is not None else None,
        unit=probe.unit if probe else None,
        headline=probe.headline if probe else (),
        **values,
    )
    return replace(step, changes=changes_of(step, r.parent))


def _reported(t: Table, unit: str, phases: tuple[Phase, ...]) -> Reported | None:
    value = t.raw("reported")
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Reported(float(value), unit)
    r = Table(value, f"{t.where}: field 'reported'")
    timed = [p.name for p in phases if p.timed]
    per_phase: dict[str, float] = {}
    if r.has("phases"):
        p = Table(r.raw("phases"), f"{r.where}: field 'phases'")
        for name in list(p.data):
            if name not in timed:
                raise p.fail(name, f"not a timed phase of this step ({', '.join(timed)})")
            per_phase[name] = p.number(name)
        p.done()
    rep = Reported(r.number("value"), r.text("unit", unit), r.text("note", ""), per_phase)
    r.done()
    return rep
