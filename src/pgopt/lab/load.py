"""Load and validate a lab folder (lab.toml + SQL and pgbench scripts) once.

Every error names the file, the step and the field, e.g.
`my-lab/lab.toml: step 'async': field 'clients': expected an integer, got 'x'`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .. import probes
from ..errors import LabError
from ..pgbench.command import MODES, ScriptRef, check_extra_args
from ..target.settings import normalize
from . import expressions
from .spec import (
    Background,
    Check,
    Dataset,
    Fact,
    Lab,
    Metric,
    Phase,
    Reported,
    RunDefaults,
    Step,
)

LAB_FILE = "lab.toml"
METRIC_SOURCES = ("tps", "sql", "phases")
PHASE_ACTIONS = ("restore",)
BUILTIN_SCRIPTS = ("tpcb-like", "simple-update", "select-only")
_MISSING: Any = object()


class _Table:
    """A TOML table being validated; remembers which keys were read."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise LabError(f"{where}: expected a table")
        self.data: dict[str, Any] = data
        self.where = where
        self.read: set[str] = set()

    def _get(self, key: str, default: Any) -> Any:
        self.read.add(key)
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise LabError(f"{self.where}: field '{key}' is required")
        return default

    def fail(self, key: str, message: str) -> LabError:
        return LabError(f"{self.where}: field '{key}': {message}")

    def text(self, key: str, default: Any = _MISSING) -> Any:
        value = self._get(key, default)
        if value is not default and not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {value!r}")
        return value

    def integer(self, key: str, default: Any = _MISSING, minimum: int = 1) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {value!r}")
        if value < minimum:
            raise self.fail(key, f"must be at least {minimum}, got {value}")
        return value

    def number(self, key: str, default: Any = _MISSING) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"expected a number, got {value!r}")
        if value <= 0:
            raise self.fail(key, f"must be positive, got {value}")
        return float(value)

    def flag(self, key: str, default: Any = _MISSING) -> Any:
        value = self._get(key, default)
        if value is not default and not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {value!r}")
        return value

    def array(self, key: str, default: Any = _MISSING) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            raise self.fail(key, f"expected a list, got {value!r}")
        return value

    def table(self, key: str, default: Any = _MISSING) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {value!r}")
        return value

    def has(self, key: str) -> bool:
        return key in self.data

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.read)
        if unknown:
            raise LabError(f"{self.where}: unknown field '{unknown[0]}'")


def load_lab(folder: Path) -> Lab:
    """Read `folder/lab.toml`, check every field and file, and return the Lab."""
    folder = folder.resolve()
    path = folder / LAB_FILE
    where = str(path)
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise LabError(f"{folder}: no {LAB_FILE} in this folder") from None
    except tomllib.TOMLDecodeError as e:
        raise LabError(f"{where}: invalid TOML: {e}") from e
    top = _Table(raw, where)
    title = top.text("title")
    seed = top.text("seed", "")
    description = top.text("description", "").strip()
    dataset = _dataset(_Table(top.table("dataset", {}), f"{where}: [dataset]"), folder)
    metric = _metric(_Table(top.table("metric", {}), f"{where}: [metric]"), folder)
    defaults = _run(_Table(top.table("run", {}), f"{where}: [run]"), None)
    quick = _run(_Table(top.table("quick", {}), f"{where}: [quick]"), defaults, quick=True)
    raw_steps = top.array("steps")
    if not raw_steps:
        raise LabError(f"{where}: field 'steps': a lab needs at least one step")
    steps = _steps(raw_steps, where, folder, defaults, metric)
    checks = tuple(
        _check(_Table(c, f"{where}: check {i + 1}"), folder)
        for i, c in enumerate(top.array("checks", []))
    )
    top.done()
    return Lab(
        name=folder.name,
        path=folder,
        title=title,
        seed=seed,
        description=description,
        dataset=dataset,
        metric=metric,
        defaults=defaults,
        quick=quick,
        steps=steps,
        checks=checks,
    )


def _file(t: _Table, key: str, name: Any, folder: Path) -> Path:
    if not isinstance(name, str):
        raise t.fail(key, f"expected a file name, got {name!r}")
    path = (folder / name).resolve()
    if not path.is_file():
        raise t.fail(key, f"file {name!r} not found in {folder}")
    return path


def _sql_text(t: _Table, folder: Path) -> str:
    if t.has("file"):
        return _file(t, "file", t.text("file"), folder).read_text()
    return str(t.text("sql"))


def _dataset(t: _Table, folder: Path) -> Dataset:
    variables = {k: str(v) for k, v in t.table("variables", {}).items()}
    size = t.integer("size", 0, minimum=0)
    ds = Dataset(
        variable=t.text("variable", None),
        size=size,
        min_size=t.integer("min", min(size, 1000), minimum=0),
        setup=tuple(_file(t, "setup", f, folder) for f in t.array("setup", [])),
        variables=variables,
        dump=t.flag("dump", False),
        contention_table=t.text("contention_table", None),
    )
    if ds.variable is not None and ds.size == 0:
        raise t.fail("size", "is required when 'variable' is set")
    known = ["scale", *([ds.variable] if ds.variable else [])]
    for key, value in variables.items():
        try:
            expressions.check(value, known)
        except LabError as e:
            raise t.fail("variables", f"{key}: {e}") from None
    t.done()
    return ds


def _metric(t: _Table, folder: Path) -> Metric:
    source = t.text("source", "tps")
    if source not in METRIC_SOURCES:
        raise t.fail("source", f"must be one of {', '.join(METRIC_SOURCES)}, got {source!r}")
    sql = None
    if source == "sql":
        sql = _sql_text(t, folder)
    default_unit = {"tps": "tx/s", "sql": "rows/s", "phases": "s"}[source]
    metric = Metric(
        name=t.text("name", "tps" if source == "tps" else source),
        unit=t.text("unit", default_unit),
        source=source,
        higher_is_better=t.flag("higher_is_better", source != "phases"),
        sql=sql,
    )
    t.done()
    return metric


def _run(t: _Table, base: RunDefaults | None, *, quick: bool = False) -> RunDefaults:
    fallback = base or RunDefaults(
        clients=8, threads=None, duration_s=20, reps=3, warmup_s=5, scale=1.0
    )
    if quick and base is not None:
        fallback = RunDefaults(
            clients=base.clients,
            threads=base.threads,
            duration_s=5,
            reps=2,
            warmup_s=1,
            scale=min(base.scale, 0.02),
            restart=base.restart,
        )
    run = RunDefaults(
        clients=t.integer("clients", fallback.clients),
        threads=t.integer("threads", fallback.threads),
        duration_s=t.integer("duration", fallback.duration_s),
        reps=t.integer("reps", fallback.reps),
        warmup_s=t.integer("warmup", fallback.warmup_s, minimum=0),
        scale=t.number("scale", fallback.scale),
        restart=t.flag("restart", fallback.restart),
    )
    t.done()
    return run


def _scripts(t: _Table, folder: Path) -> tuple[ScriptRef, ...]:
    out: list[ScriptRef] = []
    for item in t.array("scripts"):
        if isinstance(item, str):
            item = {"file": item}
        s = _Table(item, f"{t.where}: field 'scripts'")
        weight = s.integer("weight", 1)
        if s.has("builtin"):
            builtin = s.text("builtin")
            if builtin not in BUILTIN_SCRIPTS:
                raise s.fail("builtin", f"must be one of {', '.join(BUILTIN_SCRIPTS)}")
            out.append(ScriptRef(builtin=builtin, weight=weight))
        else:
            out.append(ScriptRef(path=_file(s, "file", s.text("file"), folder), weight=weight))
        s.done()
    if not out:
        raise t.fail("scripts", "needs at least one script")
    return tuple(out)


def _phases(t: _Table, folder: Path) -> tuple[Phase, ...]:
    out: list[Phase] = []
    for i, item in enumerate(t.array("phases")):
        p = _Table(item, f"{t.where}: phase {i + 1}")
        name = p.text("name")
        action = p.text("action", None)
        if action is not None and action not in PHASE_ACTIONS:
            raise p.fail("action", f"must be one of {', '.join(PHASE_ACTIONS)}")
        sql = None if action else _file(p, "sql", p.text("sql"), folder)
        timed = p.flag("timed", True)
        if not timed and any(o.timed for o in out):
            raise p.fail("timed", "untimed phases prepare a run: put them before the timed ones")
        out.append(Phase(name=name, sql=sql, action=action, timed=timed))
        p.done()
    return tuple(out)


def _reported(t: _Table, unit: str, phases: tuple[Phase, ...]) -> Reported | None:
    value = t._get("reported", None)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Reported(float(value), unit)
    r = _Table(value, f"{t.where}: field 'reported'")
    timed = [p.name for p in phases if p.timed]
    per_phase: dict[str, float] = {}
    if r.has("phases"):
        p = _Table(r._get("phases", None), f"{r.where}: field 'phases'")
        for name in list(p.data):
            if name not in timed:
                raise p.fail(name, f"not a timed phase of this step ({', '.join(timed)})")
            per_phase[name] = p.number(name)
        p.done()
    rep = Reported(r.number("value"), r.text("unit", unit), r.text("note", ""), per_phase)
    r.done()
    return rep


_INHERITED = (
    "settings",
    "mode",
    "scripts",
    "clients",
    "threads",
    "pgbench_args",
    "phases",
    "fresh",
    "per_transaction",
    "transactions",
    "background",
    "monitor",
    "min_server",
    "min_pgbench",
    "variables",
)


def _steps(
    raw_steps: list[Any], where: str, folder: Path, defaults: RunDefaults, metric: Metric
) -> tuple[Step, ...]:
    steps: list[Step] = []
    by_name: dict[str, Step] = {}
    for i, raw in enumerate(raw_steps):
        name = raw.get("name") if isinstance(raw, dict) else None
        label = f"step '{name}'" if isinstance(name, str) else f"step {i + 1}"
        t = _Table(raw, f"{where}: {label}")
        name = t.text("name")
        if not name.replace("_", "").replace("-", "").isalnum():
            raise t.fail("name", "use letters, digits, '-' and '_' only")
        if name in by_name:
            raise t.fail("name", f"step {name!r} is defined twice")
        parent_name = t.text("from", steps[-1].name if steps else None)
        if parent_name is not None and parent_name not in by_name:
            raise t.fail("from", f"no earlier step named {parent_name!r}")
        parent = by_name.get(parent_name) if parent_name else None
        sweep = _Table(t.table("sweep", {}), f"{t.where}: field 'sweep'")
        sweep_clients = sweep.array("clients", [])
        sweep.done()
        for clients in sweep_clients or [None]:
            step = _step(t, folder, defaults, metric, parent, name, clients)
            if step.name in by_name:
                raise t.fail("sweep", f"step {step.name!r} is defined twice")
            steps.append(step)
            by_name[step.name] = step
            if clients is not None:
                by_name.setdefault(name, step)
        t.done()
    return tuple(steps)


def _step(
    t: _Table,
    folder: Path,
    defaults: RunDefaults,
    metric: Metric,
    parent: Step | None,
    name: str,
    sweep_clients: Any,
) -> Step:
    settings = {**(parent.settings if parent else {})}
    own_settings = normalize(t.table("settings", {}))
    for key, value in own_settings.items():
        try:
            expressions.check(value)
        except LabError as e:
            raise t.fail("settings", f"{key}: {e}") from None
    settings.update(own_settings)
    mode = t.text("mode", parent.mode if parent else "simple")
    if mode not in MODES:
        raise t.fail("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    probe = t.text("probe", None)
    if probe is not None:
        try:
            probes.get(probe)
        except LabError as e:
            raise t.fail("probe", str(e)) from None
    if t.has("scripts"):
        scripts = _scripts(t, folder)
    elif probe is not None or metric.source == "phases":
        scripts = ()
    elif parent is not None and parent.scripts:
        scripts = parent.scripts
    else:
        raise t.fail("scripts", "needs pgbench scripts (or a probe), none to inherit")
    clients = t.integer("clients", parent.clients if parent else defaults.clients)
    if sweep_clients is not None:
        if (
            isinstance(sweep_clients, bool)
            or not isinstance(sweep_clients, int)
            or sweep_clients < 1
        ):
            raise t.fail("sweep", f"clients must be positive integers, got {sweep_clients!r}")
        clients = sweep_clients
    threads = t.integer("threads", parent.threads if parent else defaults.threads)
    try:
        pgbench_args = check_extra_args(
            t.array("pgbench_args", list(parent.pgbench_args) if parent else [])
        )
    except LabError as e:
        raise t.fail("pgbench_args", str(e)) from None
    schema = tuple(_file(t, "schema", f, folder) for f in t.array("schema", []))
    phases = _phases(t, folder) if t.has("phases") else (parent.phases if parent else ())
    if metric.source == "phases" and not phases:
        raise t.fail("phases", "a lab timed by phase needs phases in its first step")
    fresh = t.flag("fresh", parent.fresh if parent else False)
    per_tx = t.number("per_transaction", parent.per_transaction if parent else 1.0)
    transactions = t.integer("transactions", parent.transactions if parent else None)
    # facts are measured, not changed: inherited, but never part of `changes`
    facts = (
        tuple(_fact(t, str(k), v) for k, v in t.table("facts", {}).items())
        if t.has("facts")
        else (parent.facts if parent else ())
    )
    background = (
        _background(t, folder) if t.has("background") else (parent.background if parent else None)
    )
    monitor = (
        {str(k): _fact_sql(t, v) for k, v in t.table("monitor").items()}
        if t.has("monitor")
        else dict(parent.monitor)
        if parent
        else {}
    )
    if background is not None and transactions is not None:
        raise t.fail("background", "runs for the step's duration: not with 'transactions'")
    step_name = name if sweep_clients is None else f"{name}-c{sweep_clients}"
    title = t.text("title", name.replace("_", " "))
    if sweep_clients is not None:
        title = f"{title}, {sweep_clients} clients"
    step = Step(
        name=step_name,
        title=title,
        parent=parent.name if parent else None,
        settings=settings,
        mode=mode,
        scripts=scripts,
        clients=clients,
        threads=threads,
        pgbench_args=pgbench_args,
        schema=schema,
        phases=phases,
        fresh=fresh,
        per_transaction=per_tx,
        transactions=transactions,
        reported=_reported(t, metric.unit, phases),
        changes={},
        facts=facts,
        note=t.text("note", "").strip(),
        sweep=name if sweep_clients is not None else None,
        background=background,
        monitor=monitor,
        min_server=t.integer("min_server", parent.min_server if parent else None),
        min_pgbench=t.integer("min_pgbench", parent.min_pgbench if parent else None),
        probe=probe,
        probe_args=dict(t.table("probe_args", {})),
        variables={
            **(parent.variables if parent else {}),
            **{str(k): str(v) for k, v in t.table("variables", {}).items()},
        },
    )
    return _with_changes(step, parent)


def _background(t: _Table, folder: Path) -> Background:
    b = _Table(t.table("background"), f"{t.where}: field 'background'")
    mode = b.text("mode", "prepared")
    if mode not in MODES:
        raise b.fail("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    background = Background(
        scripts=_scripts(b, folder),
        clients=b.integer("clients", 1),
        rate=b.number("rate", None),
        mode=mode,
    )
    b.done()
    return background


def _fact(t: _Table, name: str, value: Any) -> Fact:
    """`name = "SQL"` or `name = { sql = "SQL", unit = "ms" }`."""
    if isinstance(value, dict):
        f = _Table(value, f"{t.where}: fact '{name}'")
        fact = Fact(name=name, sql=f.text("sql"), unit=f.text("unit", ""))
        f.done()
        return fact
    return Fact(name=name, sql=_fact_sql(t, value))


def _fact_sql(t: _Table, value: Any) -> str:
    if not isinstance(value, str):
        raise t.fail("facts", f"expected a SQL string (or {{ sql, unit }}), got {value!r}")
    return value


def _with_changes(step: Step, parent: Step | None) -> Step:
    """Record what differs from the parent step, for reports and result.json."""
    changes: dict[str, Any] = {}
    if parent is None:
        changes = {"settings": dict(step.settings)}
        if not step.phases and step.probe is None:
            changes["mode"] = step.mode
    else:
        changed_settings = {k: v for k, v in step.settings.items() if parent.settings.get(k) != v}
        if changed_settings:
            changes["settings"] = changed_settings
        for key in _INHERITED:
            if key == "settings":
                continue
            mine, theirs = getattr(step, key), getattr(parent, key)
            if mine != theirs:
                changes[key] = sorted(mine) if key == "monitor" else _plain(mine)
    if step.schema:
        changes["schema"] = [p.name for p in step.schema]
    if step.probe is not None:
        changes.pop("scripts", None)
        changes["probe"] = step.probe
        if step.probe_args:
            changes["probe_args"] = dict(step.probe_args)
    return Step(**{**step.__dict__, "changes": changes})


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, ScriptRef):
        label = value.builtin or (value.path.name if value.path else "?")
        return label if value.weight == 1 else f"{label}@{value.weight}"
    if isinstance(value, Phase):
        return value.name
    if isinstance(value, Background):
        rate = f" at {value.rate:g}/s" if value.rate else ""
        return f"{', '.join(_plain(value.scripts))} × {value.clients} clients{rate}"
    return value


def _check(t: _Table, folder: Path) -> Check:
    check = Check(
        name=t.text("name"),
        sql=_sql_text(t, folder),
        after=t.text("after", "step"),
        expect=t.text("expect", "true"),
    )
    if check.after not in ("step", "run"):
        raise t.fail("after", f"must be 'step' or 'run', got {check.after!r}")
    if check.expect not in ("true", "same"):
        raise t.fail("expect", f"must be 'true' or 'same', got {check.expect!r}")
    t.done()
    return check
