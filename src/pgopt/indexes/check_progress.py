"""The copy check's progress on stderr, as a lab run's (running/progress.py): on a
terminal one status line redrawn once a second (what it does, candidates checked,
seconds elapsed of the estimate); elsewhere (CI, a pipe) a line at each tenth of
the candidates, so a log of hundreds of candidates stays readable."""

from __future__ import annotations

import time

from rich.console import Console
from rich.text import Text

from ..consoles import StatusLine

LOG_STEPS = 10  # lines in a log: one at each tenth of the candidates


class CheckProgress(StatusLine):
    """Implements copy_check's progress: `phase` for what starts, `checked` after
    each candidate; a context manager that clears its line at the end."""

    def __init__(self, console: Console, total: int, estimate_s: float) -> None:
        super().__init__(console)
        self.total, self.estimate_s = total, estimate_s
        self.started = time.monotonic()
        self.done = 0
        self._phase = "copying"

    def phase(self, text: str) -> None:
        self._phase = text
        if not self.live:
            self._say(text)

    def checked(self, done: int) -> None:
        """`done` candidates of the total checked."""
        before, self.done = self.done * LOG_STEPS // self.total, done
        if not self.live and (done * LOG_STEPS // self.total > before or done == self.total):
            self._say(f"{done}/{self.total} candidates checked")

    def _say(self, text: str) -> None:
        self.console.print(f"[advise] missing-index: {text} ({self._clock()})")

    def _clock(self) -> str:
        return f"{time.monotonic() - self.started:.0f} s of about {self.estimate_s:.0f} s"

    def __rich__(self) -> Text:
        return Text(
            f"[advise] missing-index: {self._phase} · {self.done}/{self.total} candidates · "
            f"{self._clock()}"
        )
