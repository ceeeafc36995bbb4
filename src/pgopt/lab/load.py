"""Load and validate a lab folder (lab.toml + SQL and pgbench scripts) once.

Every error names the file, the step and the field, e.g.
`my-lab/lab.toml: step 'async': field 'clients': expected an integer, got 'x'`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import probes
from ..errors import LabError
from . import expressions
from .spec import Check, Dataset, Lab, Metric, MetricSource, RunDefaults, Timing
from .steps import read_steps
from .table import Table, file_field, read_toml, setup_field, sql_text

LAB_FILE = "lab.toml"
QUICK_REPS = 3  # the fewest rounds that can carry a verdict
MAX_NODES = 4  # standbys or shards: each one a server beside the lab's on this machine


def load_lab(folder: Path) -> Lab:
    """Read `folder/lab.toml`, check every field and file, and return the Lab."""
    folder = folder.resolve()
    path = folder / LAB_FILE
    raw = read_toml(path, f"{folder}: no {LAB_FILE} in this folder")
    return lab_from_dict(raw, folder, where=str(path))


def lab_from_dict(raw: dict[str, Any], folder: Path, *, where: str, name: str = "") -> Lab:
    """A lab from its fields as lab.toml would give them, checked the same way: how a
    generated lab (an A/B, a tuning) joins the labs. `folder` holds its files; `where`
    names the source in errors."""
    top = Table(raw, where)
    title = top.text("title")
    seed = top.text("seed", "")
    description = top.text("description", "").strip()
    dataset = _dataset(Table(top.table("dataset", {}), f"{where}: [dataset]"), folder)
    metric = _metric(Table(top.table("metric", {}), f"{where}: [metric]"), folder)
    defaults = _run(Table(top.table("run", {}), f"{where}: [run]"), None)
    quick = _run(Table(top.table("quick", {}), f"{where}: [quick]"), defaults, quick=True)
    raw_steps = top.array("steps")
    if not raw_steps:
        raise LabError(f"{where}: field 'steps': a lab needs at least one step")
    steps = read_steps(raw_steps, where, folder, defaults, metric)
    known = {s.name for s in steps}
    if metric.ceiling is not None and metric.ceiling not in known:
        raise LabError(f"{where}: [metric]: field 'ceiling': no step {metric.ceiling!r}")
    for quick_step in quick.steps:
        if quick_step not in known:
            raise LabError(f"{where}: [quick]: field 'steps': no step {quick_step!r}")
    standbys, shards, shard_setup = _cluster(
        Table(top.table("cluster", {}), f"{where}: [cluster]"), folder
    )
    for step in steps:
        if step.nodes != "primary" and not standbys:
            raise LabError(
                f"{where}: step {step.name!r}: field 'nodes': "
                f"{step.nodes!r} needs hot standbys ([cluster] standbys = N)"
            )
        if step.probe is not None and probes.get(step.probe).needs_standby and not standbys:
            raise LabError(
                f"{where}: step {step.name!r}: field 'probe': "
                f"{step.probe!r} reads on a hot standby ([cluster] standbys = N)"
            )
        if step.standby_settings and not standbys:
            raise LabError(
                f"{where}: step {step.name!r}: field 'standby_settings': "
                "needs hot standbys ([cluster] standbys = N)"
            )
    fresh = {s.fresh for s in steps}
    if len(fresh) > 1:
        raise LabError(
            f"{where}: field 'fresh': every step or none (a fresh step's runs replace the "
            "lab database with a copy of the step's template)"
        )
    if True in fresh and shards:
        raise LabError(f"{where}: field 'fresh': a lab with shards builds its data once")
    checks = tuple(
        _check(Table(c, f"{where}: check {i + 1}"), folder)
        for i, c in enumerate(top.array("checks", []))
    )
    timing = _timing(Table(top.table("timing", {}), f"{where}: [timing]"))
    top.done()
    return Lab(
        name=name or folder.name,
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
        standbys=standbys,
        shards=shards,
        shard_setup=shard_setup,
        timing=timing,
    )


def _dataset(t: Table, folder: Path) -> Dataset:
    variables = {k: str(v) for k, v in t.table("variables", {}).items()}
    size = t.integer("size", 0, minimum=0)
    ds = Dataset(
        variable=t.text("variable", None),
        size=size,
        min_size=t.integer("min", min(size, 1000), minimum=0),
        setup=tuple(setup_field(t, "setup", f, folder) for f in t.array("setup", [])),
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


def _metric(t: Table, folder: Path) -> Metric:
    source = t.choice("source", MetricSource, MetricSource.TPS)
    sql = sql_text(t, folder) if source is MetricSource.SQL else None
    default_unit = {MetricSource.TPS: "tx/s", MetricSource.SQL: "rows/s", MetricSource.PHASES: "s"}
    metric = Metric(
        name=t.text("name", str(source)),
        unit=t.text("unit", default_unit[source]),
        source=source,
        higher_is_better=t.flag("higher_is_better", source is not MetricSource.PHASES),
        sql=sql,
        margin=t.number("margin", 3.0) / 100,
        ceiling=t.text("ceiling", None),
    )
    t.done()
    return metric


def _run(t: Table, base: RunDefaults | None, *, quick: bool = False) -> RunDefaults:
    fallback = base or RunDefaults(
        clients=8, threads=None, duration_s=20, reps=None, warmup_s=5, scale=1.0
    )
    if quick and base is not None:
        fallback = RunDefaults(
            clients=base.clients,
            threads=base.threads,
            duration_s=5,
            reps=QUICK_REPS,
            warmup_s=1,
            scale=min(base.scale, 0.02),
            restart=base.restart,
        )
    run = RunDefaults(
        clients=t.integer("clients", fallback.clients),
        threads=t.integer("threads", fallback.threads),
        duration_s=t.integer("duration", fallback.duration_s),
        reps=_reps(t, fallback.reps),
        warmup_s=t.integer("warmup", fallback.warmup_s, minimum=0),
        scale=t.number("scale", fallback.scale),
        restart=t.flag("restart", fallback.restart),
        steps=tuple(str(n) for n in t.array("steps", [])) if quick else (),
    )
    t.done()
    return run


def _reps(t: Table, default: int | None) -> int | None:
    """`reps = "auto"` (sequential looks) or a fixed number of rounds."""
    if t.has("reps") and isinstance(t.data["reps"], str):
        if t.data["reps"] != "auto":
            raise t.fail("reps", f'expected a number of rounds or "auto", got {t.data["reps"]!r}')
        t.read.add("reps")
        return None
    value: int | None = t.integer("reps", default)
    return value


def _timing(t: Table) -> Timing:
    """`[timing] setup = 12, run = 150`: seconds at scale 1 (the estimate's only input
    that a plan cannot give)."""
    run = t.number("run", None)
    timing = Timing(setup_s=t.number("setup", 0.0), run_s=run)
    t.done()
    return timing


def _cluster(t: Table, folder: Path) -> tuple[int, int, tuple[Path, ...]]:
    """The servers beside the lab's own: hot standbys of it, and shards its data is
    spread over (with the SQL files that prepare each shard)."""
    standbys: int = t.integer("standbys", 0, minimum=0)
    shards: int = t.integer("shards", 0, minimum=0)
    for key, count in (("standbys", standbys), ("shards", shards)):
        if count > MAX_NODES:
            raise t.fail(key, f"at most {MAX_NODES}")
    setup = tuple(file_field(t, "shard_setup", f, folder) for f in t.array("shard_setup", []))
    if setup and not shards:
        raise t.fail("shard_setup", "needs shards")
    t.done()
    return standbys, shards, setup


def _check(t: Table, folder: Path) -> Check:
    check = Check(
        name=t.text("name"),
        sql=sql_text(t, folder),
        after=t.text("after", "step"),
        expect=t.text("expect", "true"),
    )
    if check.after not in ("step", "run"):
        raise t.fail("after", f"must be 'step' or 'run', got {check.after!r}")
    if check.expect not in ("true", "same"):
        raise t.fail("expect", f"must be 'true' or 'same', got {check.expect!r}")
    t.done()
    return check
