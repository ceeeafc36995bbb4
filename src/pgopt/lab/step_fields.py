"""The fields of a lab step, declared once each.

One declaration per field says how its TOML value is read and checked, what a
step without it takes (the step it derives from, or a default), whether its own
value adds to the parent's (settings, variables), and how it reads in a report's
"what changed". steps.py walks this table; nothing else names the fields.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import probes
from ..errors import LabError
from ..pgbench.command import QueryMode, ScriptRef, check_extra_args
from ..servers.settings import normalize
from ..words import plural
from . import expressions
from .spec import Background, Fact, Metric, Phase, PhaseAction, RunDefaults, Step
from .table import Table, file_field

BUILTIN_SCRIPTS = ("tpcb-like", "simple-update", "select-only")
POOLERS = ("pgbouncer",)  # what servers/pooler.py can start
NODES = ("primary", "standbys", "all")  # where a step's pgbench runs ([cluster] labs)


@dataclass(frozen=True)
class Reading:
    """What reading one step needs besides its own table."""

    folder: Path
    defaults: RunDefaults
    metric: Metric
    parent: Step | None


Reader = Callable[[Table, Reading], Any]


@dataclass(frozen=True)
class StepField:
    key: str
    read: Reader  # the field's own value, when the step has the key
    default: Callable[[Reading], Any]  # with no parent to take it from
    inherit: bool = True  # a step without the key takes its parent's
    merge: bool = False  # a dict: the step's own entries update the parent's
    # in what a step changes (reports, result.json): "value" when it differs from the
    # parent's, "entries" its entries that differ, "own" whenever set, "never"
    shown: str = "value"
    label: Callable[[Any], Any] = lambda value: value


def _settings_of(key: str) -> Reader:
    def read(t: Table, _r: Reading) -> dict[str, str]:
        own = normalize(t.table(key))
        for name, value in own.items():
            try:
                expressions.check(value)
            except LabError as e:
                raise t.fail(key, f"{name}: {e}") from None
        return own

    return read


def _mode(t: Table, _r: Reading) -> QueryMode:
    return t.choice("mode", QueryMode)


def read_scripts(t: Table, folder: Path) -> tuple[ScriptRef, ...]:
    out: list[ScriptRef] = []
    for item in t.array("scripts"):
        if isinstance(item, str):
            item = {"file": item}
        s = Table(item, f"{t.where}: field 'scripts'")
        weight = s.integer("weight", 1)
        if s.has("builtin"):
            builtin = s.text("builtin")
            if builtin not in BUILTIN_SCRIPTS:
                raise s.fail("builtin", f"must be one of {', '.join(BUILTIN_SCRIPTS)}")
            out.append(ScriptRef(builtin=builtin, weight=weight))
        else:
            out.append(ScriptRef(path=file_field(s, "file", s.text("file"), folder), weight=weight))
        s.done()
    if not out:
        raise t.fail("scripts", "needs at least one script")
    return tuple(out)


def _pgbench_args(t: Table, _r: Reading) -> tuple[str, ...]:
    try:
        return check_extra_args(t.array("pgbench_args"))
    except LabError as e:
        raise t.fail("pgbench_args", str(e)) from None


def _phases(t: Table, r: Reading) -> tuple[Phase, ...]:
    out: list[Phase] = []
    for i, item in enumerate(t.array("phases")):
        p = Table(item, f"{t.where}: phase {i + 1}")
        name = p.text("name")
        action = p.choice("action", PhaseAction, None) if p.has("action") else None
        sql = None if action else file_field(p, "sql", p.text("sql"), r.folder)
        timed = p.flag("timed", True)
        if not timed and any(o.timed for o in out):
            raise p.fail("timed", "untimed phases prepare a run: put them before the timed ones")
        out.append(Phase(name=name, sql=sql, action=action, timed=timed))
        p.done()
    return tuple(out)


def _facts(t: Table, _r: Reading) -> tuple[Fact, ...]:
    return tuple(_fact(t, str(k), v) for k, v in t.table("facts").items())


def _fact(t: Table, name: str, value: Any) -> Fact:
    """`name = "SQL"` or `name = { sql = "SQL", unit = "ms" }`."""
    if isinstance(value, dict):
        f = Table(value, f"{t.where}: fact '{name}'")
        fact = Fact(name=name, sql=f.text("sql"), unit=f.text("unit", ""))
        f.done()
        return fact
    return Fact(name=name, sql=_sql(t, value))


def _sql(t: Table, value: Any) -> str:
    if not isinstance(value, str):
        raise t.fail("facts", f"expected a SQL string (or {{ sql, unit }}), got {value!r}")
    return value


def _background(t: Table, r: Reading) -> Background:
    b = Table(t.table("background"), f"{t.where}: field 'background'")
    mode = b.choice("mode", QueryMode, QueryMode.PREPARED)
    background = Background(
        scripts=read_scripts(b, r.folder),
        clients=b.integer("clients", 1),
        rate=b.number("rate", None),
        mode=mode,
    )
    b.done()
    return background


def _probe(t: Table, _r: Reading) -> str:
    probe = str(t.text("probe"))
    try:
        probes.get(probe)
    except LabError as e:
        raise t.fail("probe", str(e)) from None
    return probe


def _pooler(t: Table, _r: Reading) -> str:
    pooler = str(t.text("pooler"))
    if pooler not in POOLERS:
        raise t.fail("pooler", f"must be one of {', '.join(POOLERS)}")
    return pooler


def _nodes(t: Table, _r: Reading) -> str:
    nodes = str(t.text("nodes"))
    if nodes not in NODES:
        raise t.fail("nodes", f"must be one of {', '.join(NODES)}")
    return nodes


def _integer(key: str, minimum: int = 1) -> Reader:
    return lambda t, _r: t.integer(key, minimum=minimum)


def label(value: Any) -> Any:
    """How a field's value reads in "what changed" and result.json `changes`."""
    if isinstance(value, tuple):
        return [label(v) for v in value]
    if isinstance(value, ScriptRef):
        name = value.builtin or (value.path.name if value.path else "?")
        return name if value.weight == 1 else f"{name}@{value.weight}"
    if isinstance(value, Phase):
        return value.name
    if isinstance(value, Path):
        return value.name
    if isinstance(value, Background):
        rate = f" at {value.rate:g}/s" if value.rate else ""
        return f"{', '.join(label(value.scripts))} × {plural(value.clients, 'client')}{rate}"
    return value


STEP_FIELDS: tuple[StepField, ...] = (
    StepField("settings", _settings_of("settings"), lambda r: {}, merge=True, shown="entries"),
    StepField("mode", _mode, lambda r: QueryMode.SIMPLE),
    StepField("scripts", lambda t, r: read_scripts(t, r.folder), lambda r: (), label=label),
    StepField("clients", _integer("clients"), lambda r: r.defaults.clients),
    StepField("threads", _integer("threads"), lambda r: r.defaults.threads),
    StepField("pgbench_args", _pgbench_args, lambda r: (), label=label),
    StepField("phases", _phases, lambda r: (), label=label),
    StepField("fresh", lambda t, r: t.flag("fresh"), lambda r: False),
    StepField("per_transaction", lambda t, r: t.number("per_transaction"), lambda r: 1.0),
    StepField("transactions", _integer("transactions"), lambda r: None),
    StepField("background", _background, lambda r: None, label=label),
    StepField(
        "monitor",
        lambda t, r: {str(k): _sql(t, v) for k, v in t.table("monitor").items()},
        lambda r: {},
        label=sorted,
    ),
    StepField("pooler", _pooler, lambda r: None),
    StepField("nodes", _nodes, lambda r: "primary"),
    StepField(
        "standby_settings",
        _settings_of("standby_settings"),
        lambda r: {},
        merge=True,
        shown="entries",
    ),
    StepField("min_server", _integer("min_server"), lambda r: None),
    StepField("min_pgbench", _integer("min_pgbench"), lambda r: None),
    StepField(
        "variables",
        lambda t, r: {str(k): str(v) for k, v in t.table("variables").items()},
        lambda r: {},
        merge=True,
    ),
    # measured, not changed: inherited, never part of what a step changes
    StepField("facts", _facts, lambda r: (), shown="never"),
    # the step's own only
    StepField(
        "schema",
        lambda t, r: tuple(file_field(t, "schema", f, r.folder) for f in t.array("schema")),
        lambda r: (),
        inherit=False,
        shown="own",
        label=label,
    ),
    StepField("probe", _probe, lambda r: None, inherit=False, shown="own"),
    StepField(
        "baseline", lambda t, r: t.flag("baseline"), lambda r: False, inherit=False, shown="never"
    ),
    StepField(
        "probe_args",
        lambda t, r: dict(t.table("probe_args")),
        lambda r: {},
        inherit=False,
        shown="own",
    ),
)


def field_values(t: Table, r: Reading) -> dict[str, Any]:
    """Every field's value for the step read from `t`: its own, else its parent's, else
    the default."""
    values: dict[str, Any] = {}
    for field in STEP_FIELDS:
        inherited = field.inherit and r.parent is not None
        parents = getattr(r.parent, field.key) if inherited else None
        if t.has(field.key):
            own = field.read(t, r)
            values[field.key] = {**parents, **own} if field.merge and parents else own
        else:
            values[field.key] = parents if inherited else field.default(r)
    return values


def changes_of(step: Step, parent: Step | None) -> dict[str, Any]:
    """What `step` changes against the step it derives from, as reports show it; the
    first step's settings, and its protocol where pgbench times it."""
    changes: dict[str, Any] = {}
    if parent is None:
        changes["settings"] = dict(step.settings)
        if not step.phases and step.probe is None:
            changes["mode"] = step.mode
    for field in STEP_FIELDS:
        mine = getattr(step, field.key)
        if field.shown == "own":
            if mine:
                changes[field.key] = field.label(mine)
        elif parent is None or field.shown == "never":
            continue
        elif field.shown == "entries":
            theirs = getattr(parent, field.key)
            differing = {k: v for k, v in mine.items() if theirs.get(k) != v}
            if differing:
                changes[field.key] = differing
        elif mine != getattr(parent, field.key):
            changes[field.key] = field.label(mine)
    if step.probe is not None:
        changes.pop("scripts", None)
    return changes
