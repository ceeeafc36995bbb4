"""An index proof's A/B read (pure): the set against none, each index left out in
turn, each candidate the write estimate rejected added in turn; per statement,
its time per call under each (pg_stat_statements of every run, the medians), so
the proof says which statements got faster and which writes slower; WAL per
transaction."""

from __future__ import annotations

from typing import Any

from ..analysis.statement_moves import statement_times
from ..model.result import LabResult, StepResult
from ..replay.tag import tag_of, untagged
from ..words import plural
from .workload import write_of


def statement_effects(result: LabResult, a: str, b: str) -> list[dict[str, Any]]:
    """Each statement seen under both steps: ms per call under each and B/A, the
    biggest changes first."""
    before = statement_times(result.step(a), tag_of)
    after = statement_times(result.step(b), tag_of)
    rows = []
    for key, (tagged, ms_a, _) in before.items():
        if key not in after or ms_a <= 0:
            continue
        query, ms_b = untagged(tagged), after[key][1]
        rows.append(
            {
                "statement": key,
                "query": query,
                "writes": write_of(query)[0] is not None,
                "ms_per_call_a": round(ms_a, 4),
                "ms_per_call_b": round(ms_b, 4),
                "ratio": round(ms_b / ms_a, 3),
            }
        )
    return sorted(rows, key=lambda r: -abs(r["ratio"] - 1))


def wal_per_tx(step: StepResult) -> float | None:
    per_unit = (step.stats or {}).get("per_unit", {})
    value = per_unit.get("wal_bytes_per_tx")
    return float(value) if value is not None else None


def figures(step: StepResult) -> str:
    ratio = step.ratio_vs_previous
    if ratio is None:
        return plural(len(step.runs), "round")
    low, high = ratio.ci95
    return f"×{ratio.median:.2f} [{low:.2f}–{high:.2f}], {plural(len(step.runs), 'round')}"


# what a step's verdict against the whole set means, by what the step changed
LEFT_OUT = {  # an index dropped from the set
    "slower": "earns its place: the workload is slower without it",
    "faster": "does not earn its place: the workload is faster without it",
    "no-change": "no measurable effect of its own: the others serve its statements",
}
ADDED = {  # a candidate the write estimate rejected, added to the set
    "faster": "the estimate was wrong: the workload is faster with it",
    "slower": "rejection confirmed: the workload is slower with it",
    "no-change": "rejection stands: no measurable gain",
}


def worded(step: StepResult, words: dict[str, str]) -> str:
    """The step's verdict against the set in `words` (LEFT_OUT, ADDED), with figures."""
    return f"{words.get(step.verdict_vs_previous.value, 'undecided')} ({figures(step)})"
