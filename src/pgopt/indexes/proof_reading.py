"""An index proof's A/B read (pure): the set against none, each index left out in
turn, each candidate the write estimate rejected added in turn; per statement,
its time per call under each (pg_stat_statements of every run, the medians), so
the proof says which statements got faster and which writes slower; WAL per
transaction."""

from __future__ import annotations

import re
import statistics
from typing import Any

from ..model.result import LabResult, StepResult
from ..words import plural
from .workload import write_of

TAG = re.compile(r"/\* pgopt (\w+) \*/ ")


def statement_times(step: StepResult) -> dict[str, tuple[str, float]]:
    """Replay tag -> (the query, median ms per call over the runs)."""
    seen: dict[str, list[float]] = {}
    text: dict[str, str] = {}
    for run in step.runs:
        for row in (run.stats or {}).get("statements", []):
            tag = TAG.search(row["query"])
            if tag is None:
                continue  # not the replay's (pgopt's own sampler, its snapshots)
            key = tag.group(1)
            seen.setdefault(key, []).append(float(row["mean_ms"]))
            text[key] = TAG.sub("", row["query"])
    return {k: (text[k], statistics.median(v)) for k, v in seen.items()}


def statement_effects(result: LabResult, a: str, b: str) -> list[dict[str, Any]]:
    """Each statement seen under both steps: ms per call under each and B/A, the
    biggest changes first."""
    before, after = statement_times(result.step(a)), statement_times(result.step(b))
    rows = []
    for key, (query, ms_a) in before.items():
        if key not in after or ms_a <= 0:
            continue
        ms_b = after[key][1]
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
