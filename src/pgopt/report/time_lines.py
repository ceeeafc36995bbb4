"""What a run's wall time went to, as the lines a report's "Time" note shows (pure):
the copy of the user's data, the dataset, each fresh step's template, preparing
the runs (and from what: a clone or the template itself, and why), measuring."""

from __future__ import annotations

from ..model.result import LabResult, TimeBreakdown
from ..words import plural
from .fmt import format_bytes, format_seconds


def time_lines(result: LabResult) -> list[str]:
    spent = result.time
    if spent is None or not spent.runs:
        return []
    parts = []
    if spent.copy_s is not None:
        size = f" of {format_bytes(spent.copy_bytes)}" if spent.copy_bytes else ""
        parts.append(f"copying the data{size} {format_seconds(spent.copy_s)}")
    if spent.setup_s:
        restored = "restoring it" if spent.copy_s is not None else "the dataset"
        parts.append(f"{restored} {format_seconds(spent.setup_s)}")
    if spent.templates:
        parts.append(
            f"building {plural(len(spent.templates), 'template')} {format_seconds(spent.build_s)}"
        )
    per_run = f", {format_seconds(spent.prepare_per_run_s)} each" if spent.prepare_per_run_s else ""
    parts.append(
        f"preparing {plural(spent.runs, 'run')} {format_seconds(spent.prepare_s)}{per_run}"
    )
    parts.append(
        f"measuring {format_seconds(spent.measure_s)} ({spent.measured_share:.0%} of the time)"
    )
    lines = [f"{format_seconds(spent.total_s)}: " + ", ".join(parts)]
    lines += _template_lines(spent)
    return lines


def _template_lines(spent: TimeBreakdown) -> list[str]:
    lines = [spent.how] if spent.how else []
    for t in spent.templates:
        lines.append(
            f"{t.name} ({', '.join(t.steps)}): {format_bytes(t.bytes)}, "
            f"built in {format_seconds(t.build_s)}"
        )
    return lines
