"""A race of changes, each against the current best (pure): at each sequential look,
which candidates are dropped, which one wins, and whether the race is over. The
rounds go to the candidates still close, not to those already out (racing, as
irace and F-Race spend a tuner's runs).

Each candidate's verdict is analysis/verdicts.py's, at the look's sequential alpha,
Benjamini-Hochberg across the race's candidates (one family: with every candidate
doing nothing, the chance any is called faster stays at alpha). At a look a candidate
is dropped when it is decided not faster (`slower`, `no-change`), or when even the
upper end of its 95% interval is under the smallest gain that matters (1 + margin):
more rounds could still call it faster than nothing, never faster by the margin.
The race is over when no candidate is left undecided; when the best of those decided
faster is clearly the best (its interval's lower end above every undecided one's
upper end: no other could overtake it); or at the last look. Its winner is the
candidate decided faster with the largest ratio; none, when none was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..model.verdict import Verdict
from .verdicts import Decision


@dataclass(frozen=True)
class Call:
    """What a look decides: those dropped now (and why), the winner once the race is
    over (None: none decided faster), and whether it is."""

    dropped: dict[str, str]
    winner: str | None
    over: bool


def call(standing: Mapping[str, Decision], margin: float, *, last: bool) -> Call:
    """The look's call on the candidates still in the race (`standing`: each one's
    decision against the current best, all of one family); `last`: no more rounds."""
    dropped: dict[str, str] = {}
    faster: dict[str, Decision] = {}
    open_: dict[str, Decision] = {}
    for name, d in standing.items():
        e = d.evidence
        if d.verdict in (Verdict.SLOWER, Verdict.NO_CHANGE):
            dropped[name] = f"{d.verdict} ×{e.ratio:.2f} [{e.ci95[0]:.2f}–{e.ci95[1]:.2f}]"
        elif d.verdict is Verdict.FASTER:
            faster[name] = d
        elif d.p_adjusted is not None and e.ci95[1] < 1 + margin:
            dropped[name] = f"at best ×{e.ci95[1]:.2f}, under the ×{1 + margin:.2f} that matters"
        else:
            open_[name] = d
    best = max(faster, key=lambda n: faster[n].evidence.ratio, default=None)
    clear = best is not None and all(
        faster[best].evidence.ci95[0] > d.evidence.ci95[1] for d in open_.values()
    )
    over = last or not open_ or clear
    return Call(dropped, best if over else None, over)
