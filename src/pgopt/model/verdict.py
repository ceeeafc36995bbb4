"""The four verdicts a comparison can get, and n/a (analysis/verdicts.py draws them)."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    FASTER = "faster"
    SLOWER = "slower"
    NO_CHANGE = "no-change"
    INCONCLUSIVE = "inconclusive"
    NOT_APPLICABLE = "n/a"

    @property
    def decided(self) -> bool:
        """A verdict that more rounds would not be run for."""
        return self in (Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CHANGE)
