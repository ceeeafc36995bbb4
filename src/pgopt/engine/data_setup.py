"""A lab's data, once per server before the first round: the dataset's setup files
for a lab whose steps share one database (and, where its phases restore it, a
pg_dump of it), or, for fresh steps, each step's template (templates.py). What it
took goes into the run's time spent."""

from __future__ import annotations

import time

from ..lab.spec import Step
from ..model.outcomes import TimeSpent
from ..model.result import TemplateRecord
from . import workloads
from .context import RunContext
from .templates import DataTemplates


def set_up(ctx: RunContext, steps: list[Step], spent: TimeSpent) -> DataTemplates | None:
    """The data of `steps` on the server `ctx` talks to; their templates, when the
    steps are fresh."""
    if all(s.fresh for s in steps):
        return _templates(ctx, steps, spent)
    _dataset(ctx, spent)
    return None


def _dataset(ctx: RunContext, spent: TimeSpent) -> None:
    """Run the lab's setup files once, for its steps that are not fresh."""
    ds = ctx.lab.dataset
    if not ds.setup:
        return
    size = f" ({ds.variable} = {ctx.variables[ds.variable]})" if ds.variable else ""
    ctx.display.message(f"setting up the dataset{size}")
    t0 = time.monotonic()
    for path in ds.setup:
        ctx.run_setup(path, ctx.variables)
    spent.setup_s += time.monotonic() - t0
    if ds.dump:
        ctx.psql().program(
            "pg_dump",
            ["--format=custom", "--file", str(ctx.run_dir / workloads.DUMP_FILE)],
            what="dataset dump",
        )
    ctx.display.message(f"dataset ready in {time.monotonic() - t0:.1f}s")


def _templates(ctx: RunContext, steps: list[Step], spent: TimeSpent) -> DataTemplates:
    """Fresh steps: each one's data built once, as a template its runs start from."""
    templates = DataTemplates(ctx, steps)
    t0 = time.monotonic()
    templates.build()
    spent.setup_s += templates.setup_s
    spent.build_s += time.monotonic() - t0 - templates.setup_s
    spent.templates += tuple(
        TemplateRecord(t.name, tuple(t.steps), round(t.build_s, 2), t.bytes)
        for t in templates.templates
    )
    spent.runs_from = "template" if templates.read_only else "clone"
    spent.how = templates.describe()
    ctx.client_options = templates.client_options()
    ctx.display.message(templates.summary())
    return templates
