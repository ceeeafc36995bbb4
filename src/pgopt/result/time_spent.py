"""What a lab run's wall time went to (pure): the copy of the user's data, the
dataset's setup, the fresh steps' templates, preparing each timed run, measuring,
and the rest, for result.json's `time` and the reports."""

from __future__ import annotations

from ..model.outcomes import ExperimentOutcome
from ..model.result import TimeBreakdown


def time_breakdown(outcome: ExperimentOutcome) -> TimeBreakdown:
    spent, copy = outcome.time, outcome.lab.copy
    copy_s = copy.seconds if copy is not None else 0.0
    total = outcome.duration_s + copy_s
    counted = spent.setup_s + spent.build_s + spent.prepare_s + spent.measure_s
    return TimeBreakdown(
        total_s=round(total, 1),
        setup_s=round(spent.setup_s, 1),
        build_s=round(spent.build_s, 1),
        prepare_s=round(spent.prepare_s, 1),
        measure_s=round(spent.measure_s, 1),
        other_s=round(max(outcome.duration_s - counted, 0.0), 1),
        measured_share=round(spent.measure_s / total, 3) if total > 0 else 0.0,
        runs=spent.runs,
        prepare_per_run_s=round(spent.prepare_s / spent.runs, 2) if spent.runs else None,
        copy_s=round(copy.seconds, 1) if copy is not None else None,
        copy_bytes=copy.bytes if copy is not None else None,
        copy_how=copy.how if copy is not None else "",
        copy_kind=copy.kind if copy is not None else None,
        runs_from=spent.runs_from or None,
        how=spent.how,
        templates=spent.templates,
    )
