"""The summary table printed when a lab finishes: one row per step."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from .fmt import format_changes, format_metric, format_rate, format_ratio

VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "no-change": "yellow", "n/a": "dim"}


def summary_table(result: dict[str, Any]) -> Table:
    unit = result["metric"]["unit"]
    table = Table(
        title=f"{result['lab']}: {result['title']}",
        caption=f"median ± 95% interval half-width; × baseline with its 95% interval; "
        f"verdict vs the previous step. Article: {result.get('seed') or '—'}",
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
    for step in result["steps"]:
        verdict = step["verdict_vs_previous"]
        failed = [c for c in step["checks"] if not c["passed"]]
        checks = (
            f"[red]FAILED: {failed[0]['name']}[/]"
            if failed
            else f"[green]{len(step['checks'])} ok[/]"
            if step["checks"]
            else "—"
        )
        table.add_row(
            step["name"],
            format_changes(step["changes"]),
            format_metric(step["metric"]),
            format_ratio(step["ratio_vs_baseline"]),
            f"[{VERDICT_STYLE.get(verdict, '')}]{verdict}[/]",
            _article(step),
            checks,
        )
    return table


def _article(step: dict[str, Any]) -> str:
    reported = step.get("reported")
    if not reported:
        return "—"
    text = f"{format_rate(reported['value'])}"
    if "ratio_vs_baseline" in reported:
        text += f" (×{reported['ratio_vs_baseline']:.2f})"
    return text


def print_summary(console: Console, result: dict[str, Any]) -> None:
    console.print(summary_table(result))
    for step in result["steps"]:
        for warning in step.get("warnings", []):
            console.print(f"[yellow]warning[/] {step['name']}: {warning}", highlight=False)
    if not result.get("passed", True):
        console.print("[bold red]a check failed[/]: see the checks column")
