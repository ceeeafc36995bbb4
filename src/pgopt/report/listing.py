"""`pgopt runs`: the stored runs as a terminal table, each with its one-line answer."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..model.result import LabResult
from ..store import StoredRun
from .fields import headline, server_versions
from .fmt import format_ratio, format_verdict_word


def runs_table(runs: list[StoredRun]) -> Table:
    """`pgopt runs`: one row per stored run, oldest first, with its headline result."""
    table = Table(title="stored runs", title_justify="left")
    table.add_column("started (UTC)")
    table.add_column("lab")
    table.add_column("steps", justify="right")
    table.add_column("headline")
    table.add_column("status")
    table.add_column("folder", overflow="fold")
    for run in runs:
        r = run.result
        table.add_row(
            r.started_at.replace("T", " ").rstrip("Z"),
            f"{r.lab}\nPG {server_versions(r.target)}",
            str(len(r.steps)),
            _headline(r),
            _status(r),
            str(run.path),
        )
    return table


def _headline(result: LabResult) -> str:
    """'covering ×1.30 [0.83–2.03] inconclusive': every ratio with its verdict."""
    best = headline(result)
    if best is None:
        return "—"
    ratio = best.ratio_vs_baseline
    verdict = format_verdict_word(ratio, str(best.verdict_vs_baseline))
    versus = f" vs {best.baseline}" if best.baseline else ""
    return f"{best.name} {format_ratio(ratio)} {verdict}{versus}"


def _status(result: LabResult) -> Text:
    if not result.complete:
        return Text("incomplete", style="yellow")
    if not result.passed:
        return Text("check failed", style="red")
    return Text("ok", style="green")
