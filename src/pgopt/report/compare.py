"""Two stored runs of one lab side by side: B's median over A's, step by step.

Pure: the comparison is computed from the two result.json documents alone,
with the same bootstrap and verdict rule as within a run. Runs that differ in
parameters, server or machine are compared anyway, with the differences listed,
because that is often the question ("did PostgreSQL 18 help?").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from rich.table import Table

from .. import stats
from ..errors import UsageError
from .fmt import format_rate, format_ratio
from .terminal import VERDICT_STYLE


@dataclass(frozen=True)
class StepComparison:
    name: str
    a_median: float
    b_median: float
    ratio: stats.Interval | None  # None when A's median is zero
    verdict: str


@dataclass(frozen=True)
class Comparison:
    lab: str
    unit: str
    steps: tuple[StepComparison, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    differences: tuple[str, ...]


def compare_results(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """Compare run B against run A; both must be runs of the same lab."""
    if a["lab"] != b["lab"]:
        raise UsageError(f"cannot compare runs of different labs: {a['lab']} and {b['lab']}")
    higher = bool(a["metric"]["higher_is_better"])
    b_steps = {s["name"]: s for s in b["steps"]}
    a_names = [s["name"] for s in a["steps"]]
    compared = []
    for seed, step in enumerate(s for s in a["steps"] if s["name"] in b_steps):
        a_samples = [float(v) for v in step["metric"]["samples"]]
        b_samples = [float(v) for v in b_steps[step["name"]]["metric"]["samples"]]
        ratio = (
            stats.bootstrap_ratio(b_samples, a_samples, seed=seed)
            if stats.median(a_samples) != 0
            else None
        )
        compared.append(
            StepComparison(
                name=step["name"],
                a_median=stats.median(a_samples),
                b_median=stats.median(b_samples),
                ratio=ratio,
                verdict=(
                    stats.verdict(ratio, higher_is_better=higher) if ratio else stats.NOT_APPLICABLE
                ),
            )
        )
    return Comparison(
        lab=a["lab"],
        unit=a["metric"]["unit"],
        steps=tuple(compared),
        only_a=tuple(n for n in a_names if n not in b_steps),
        only_b=tuple(n for n in b_steps if n not in a_names),
        differences=tuple(_differences(a, b)),
    )


_CONTEXT = (
    *(("params", key) for key in ("quick", "scale", "duration_s", "reps", "clients")),
    ("target", "kind"),
    ("target", "server_version"),
    ("machine", "cpus"),
    ("metric", "unit"),
)


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What else differs between the runs, so that a ratio is read with it in mind."""
    out = []
    for section, key in _CONTEXT:
        va, vb = a.get(section, {}).get(key), b.get(section, {}).get(key)
        if va != vb:
            out.append(f"{key} {va} vs {vb}")
    return out


def comparison_table(comparison: Comparison, a_label: str, b_label: str) -> Table:
    """The terminal table of `pgopt compare`: A, B, B/A with its 95% interval, verdict."""
    table = Table(
        title=escape(f"{comparison.lab}: B = {b_label} vs A = {a_label}"),
        caption="medians; B/A with its 95% bootstrap interval; verdict for B, "
        "called only when the interval excludes 1",
        title_justify="left",
        caption_justify="left",
    )
    table.add_column("step")
    table.add_column(f"A {escape(comparison.unit)}", justify="right")
    table.add_column(f"B {escape(comparison.unit)}", justify="right")
    table.add_column("B / A", justify="right")
    table.add_column("verdict")
    for step in comparison.steps:
        ratio = step.ratio.as_dict() if step.ratio else None
        table.add_row(
            escape(step.name),
            format_rate(step.a_median),
            format_rate(step.b_median),
            format_ratio(ratio),
            f"[{VERDICT_STYLE.get(step.verdict, '')}]{step.verdict}[/]",
        )
    return table


def comparison_notes(comparison: Comparison) -> list[str]:
    """Plain lines to print under the table: steps not in both, other differences."""
    notes = []
    if comparison.only_a:
        notes.append("only in A: " + ", ".join(comparison.only_a))
    if comparison.only_b:
        notes.append("only in B: " + ", ".join(comparison.only_b))
    if comparison.differences:
        notes.append("the runs differ in: " + "; ".join(comparison.differences))
    return notes
