"""`pgopt lab list` and `pgopt lab run`: run a lab (or all of them), or print its plan."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click
from rich.markup import escape

from ..consoles import out
from ..errors import ChecksFailed, LabsFailed, PgoptError, UsageError
from ..lab import builtin_labs, resolve_lab
from ..lab.catalog import DEMO_ORDER
from ..running.launch import run_lab
from ..running.options import RunOptions
from .across import across_options
from .app import print_error
from .connection import DSN, URL
from .running import run_options


@click.group()
def lab() -> None:
    """List and run labs."""


@lab.command("list")
def lab_list() -> None:
    """Labs with one-line descriptions."""
    for item in builtin_labs():
        steps = ", ".join(s.name for s in item.steps)
        out.print(f"[bold]{escape(f'{item.name:<10}')}[/] {escape(item.title)}", markup=True)
        out.print(f"{'':<10} [dim]steps: {escape(steps)}[/]", markup=True)


@lab.command("run")
@click.argument("name")
@run_options
@across_options
@click.option("--scale", type=float, help="Dataset size factor (the lab says what 1 means).")
@click.option("--steps", help="Comma-separated steps to run (the baseline always runs).")
@click.option("--ram", help="Memory the lab's settings formulas assume (e.g. 8GB).")
@click.option(
    "--redis", "redis_url", **URL, help="Redis for labs that compare with it (redis://...)."
)
@click.option(
    "--standby-dsn",
    "standby_dsns",
    multiple=True,
    **DSN,
    help="With --dsn: a hot standby of that server, for labs that need standbys (repeatable).",
)
def lab_run(name: str, **options: Any) -> None:
    """Run lab NAME (a built-in lab, a lab folder, or `all`)."""
    run = RunOptions.of(options).checked()
    if name != "all":
        result = run_lab(resolve_lab(name), run)
        if result is not None and not result.passed:
            raise ChecksFailed("a check failed")
        return
    # Every lab, one after the other; one lab's failure does not stop the others.
    labs = [item for item in builtin_labs() if item.name in DEMO_ORDER]
    if run.steps:
        raise UsageError("--steps names the steps of one lab, not of `all`")
    if run.a_pg_bin or run.b_pg_bin:
        raise UsageError("--a-pg-bin and --b-pg-bin run one lab across two servers, not `all`")
    outcomes: list[tuple[str, str]] = []
    for item in labs:
        out_dir = run.out_dir / item.name if run.out_dir is not None else None
        try:
            result = run_lab(item, replace(run, out_dir=out_dir))
            passed = result is None or result.passed
            outcomes.append((item.name, "ok" if passed else "a check failed"))
        except PgoptError as e:
            print_error(f"[{item.name}] {e}")
            outcomes.append((item.name, f"error: {str(e).splitlines()[0]}"))
    for lab_name, status in outcomes:
        out.print(f"{lab_name:<10} {status}")
    if any(status.startswith("error") for _, status in outcomes):
        raise LabsFailed("a lab stopped with an error")
    if any(status != "ok" for _, status in outcomes):
        raise ChecksFailed("a check failed")
