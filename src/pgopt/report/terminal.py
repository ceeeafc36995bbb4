"""The summary table printed when a lab finishes: one row per step."""

from __future__ import annotations

from typing import Any

from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table

from . import fields
from .fmt import (
    format_article,
    format_changes,
    format_checks,
    format_metric,
    format_rate,
    format_ratio,
    format_verdict,
)

VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "no-change": "yellow", "n/a": "dim"}
PHASE_STYLE = {"faster": "green", "slower": "red"}


def summary_table(result: dict[str, Any]) -> Table:
    unit = result["metric"]["unit"]
    table = Table(
        title=escape(f"{result['lab']}: {result['title']}"),
        caption=f"median ± 95% interval half-width; × baseline with its 95% interval; "
        f"verdict vs the step it derives from. Article: {escape(result.get('seed') or '—')}",
        title_justify="left",
        caption_justify="left",
    )
    table.add_column("step")
    table.add_column("what changed", max_width=38)
    table.add_column(unit, justify="right")
    table.add_column("× baseline", justify="right")
    table.add_column("verdict")
    table.add_column("article", justify="right")
    table.add_column("checks")
    for index, step in enumerate(result["steps"]):
        verdict = step["verdict_vs_previous"]
        checks, ok = format_checks(step)
        table.add_row(
            escape(step["name"]),
            escape(format_changes(step)),
            format_metric(step["metric"]),
            format_ratio(step["ratio_vs_baseline"]),
            f"[{VERDICT_STYLE.get(verdict, '')}]{escape(format_verdict(result, index))}[/]",
            format_article(step),
            checks if not step["checks"] else f"[{'green' if ok else 'red'}]{escape(checks)}[/]",
        )
    return table


def _per_step_and_phase(caption: str, columns: list[str], justify: JustifyMethod) -> Table:
    """An empty table with a row per step to come and a column per phase."""
    table = Table(caption=caption, caption_justify="left")
    table.add_column("step")
    for name in columns:
        table.add_column(escape(name), justify=justify)
    return table


def phase_table(result: dict[str, Any]) -> Table | None:
    """Seconds per phase and step, for labs timed by phase."""
    names, rows = fields.phase_table(result)
    if not rows:
        return None
    table = _per_step_and_phase(fields.PHASE_LEGEND, [*names, "total"], "right")
    for row in rows:
        cells = [fields.phase_cell(c) for c in row.cells]
        styled = [
            f"[{PHASE_STYLE[c[1]]}]{cell}[/]" if c and c[1] in PHASE_STYLE else cell
            for c, cell in zip(row.cells, cells, strict=True)
        ]
        table.add_row(escape(row.step), *styled, format_rate(row.total))
        if row.article is not None:
            table.add_row(*(f"[dim]{c}[/]" for c in ["  article", *fields.article_cells(row)]))
    return table


def phase_waits_table(result: dict[str, Any]) -> Table | None:
    """Where each phase spent its time, per step, for labs timed by phase."""
    names, rows = fields.phase_waits_table(result)
    if not rows:
        return None
    table = _per_step_and_phase(fields.PHASE_WAITS_LEGEND, names, "left")
    for row in rows:
        cells = ["\n".join(escape(line) for line in c) if c else "—" for c in row.cells]
        table.add_row(escape(row.step), *cells)
    return table


def print_summary(console: Console, result: dict[str, Any]) -> None:
    console.print(summary_table(result))
    for table in (phase_table(result), phase_waits_table(result)):
        if table is not None:
            console.print(table)
    for skipped in result.get("skipped", []):
        console.print(
            f"[dim]skipped {escape(skipped['name'])}: {escape(skipped['reason'])}[/]",
            highlight=False,
        )
    for step in result["steps"]:
        if step.get("why"):
            console.print(
                f"[bold]{escape(step['name'])}[/]: {escape(step['why'])}", highlight=False
            )
    for sweep in result.get("sweeps", []):
        points = ", ".join(f"{p['clients']}: {format_rate(p['median'])}" for p in sweep["points"])
        console.print(
            f"[bold]{escape(sweep['name'])}[/] sweep ({result['metric']['unit']} by clients) "
            f"{points}; knee at {sweep['knee_clients']} clients, best at "
            f"{sweep['best_clients']}",
            highlight=False,
        )
    for step in result["steps"]:
        for warning in step.get("warnings", []):
            console.print(
                f"[yellow]warning[/] {escape(step['name'])}: {escape(warning)}", highlight=False
            )
    if not result.get("passed", True):
        console.print("[bold red]a check failed[/]: see the checks column")
