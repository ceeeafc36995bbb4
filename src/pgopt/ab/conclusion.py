"""What an A/B concluded, in one line: B against A as a proof's verdict (advise
--prove, the index proof), with its ratio and interval (pure)."""

from __future__ import annotations

from ..model.result import LabResult
from ..words import plural


def verdict_of(result: LabResult) -> str:
    """B against A as a proof: the verdict, its ratio and interval, the rounds (and for
    an undecided one, what the run could have detected)."""
    b = result.step("b")
    ratio = b.ratio_vs_previous
    verdict = b.verdict_vs_previous.value
    words = {
        "faster": "proven faster",
        "slower": "slower",
        "no-change": "no measurable effect",
    }.get(verdict, "not proven: inconclusive")
    if ratio is None:
        return words
    low, high = ratio.ci95
    figures = [f"×{ratio.median:.2f} [{low:.2f}–{high:.2f}]", plural(len(b.runs), "round")]
    if verdict == "inconclusive" and ratio.detectable is not None:
        figures.append(f"could detect ≥{ratio.detectable:.0%}")
    return f"{words} ({', '.join(figures)})"
