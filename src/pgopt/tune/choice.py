"""Which profile `pgopt tune --measure` recommends, from its verdicts alone (pure).

A profile wins only on a decided verdict: pgopt's step against pgtune's faster or
slower. Otherwise there is no winner, and the run says so with what it could have
detected; tune.conf then holds the profile the user named (--ablate-from), else
pgopt's own unless the run found it slower than the defaults, then pgtune's on the
same condition, else no settings at all. The ablation starts from a winner or
from the profile the user named, never from an undecided median.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.result import LabResult, Ratio, StepResult
from ..report.fmt import format_ratio

PROFILES = ("pgopt", "pgtune")


@dataclass(frozen=True)
class Choice:
    winner: str | None  # 'pgopt' or 'pgtune' on a decided verdict, else None
    held: str | None  # the profile tune.conf holds; None: the server's defaults
    why: str  # one sentence: the verdict, and why tune.conf holds what it holds


def verdict_text(verdict: str, ratio: Ratio | None) -> str:
    """'inconclusive (×1.01 [0.86–1.17], could detect ≥17%)'."""
    if ratio is None:
        return verdict
    detail = format_ratio(ratio)
    if verdict == "inconclusive" and ratio.rounds is not None and ratio.rounds < 3:
        detail += ", needs 3 rounds"
    elif verdict == "inconclusive" and ratio.detectable is not None:
        detail += f", could detect ≥{ratio.detectable:.0%}"
    return f"{verdict} ({detail})"


def _slower_than_defaults(step: StepResult) -> bool:
    return str(step.verdict_vs_baseline) == "slower"


def choose(compared: LabResult, named: str | None = None) -> Choice:
    """The recommendation from the comparison of defaults, pgtune and pgopt."""
    pgopt = compared.step("pgopt")
    verdict = str(pgopt.verdict_vs_previous)
    against = f"pgopt against pgtune: {verdict_text(verdict, pgopt.ratio_vs_previous)}"
    if verdict in ("faster", "slower"):
        winner = "pgopt" if verdict == "faster" else "pgtune"
        return Choice(winner, winner, f"{winner} won ({against}); tune.conf holds its profile")
    if named is not None:
        return Choice(
            None, named, f"no profile won ({against}); tune.conf holds {named}'s, as named"
        )
    for name in PROFILES:
        if not _slower_than_defaults(compared.step(name)):
            why = (
                "pgopt's own, what `pgopt tune` derives; not slower than the defaults here, "
                "and not shown better than pgtune's"
                if name == "pgopt"
                else "pgtune's: pgopt's was slower than the defaults, pgtune's was not"
            )
            return Choice(None, name, f"no profile won ({against}); tune.conf holds {why}")
    return Choice(
        None,
        None,
        f"no profile won ({against}); both were slower than the defaults, "
        "so tune.conf sets nothing",
    )
