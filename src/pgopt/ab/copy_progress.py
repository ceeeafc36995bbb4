"""A physical copy's progress on stderr, as the copy check's (indexes/check_progress.py):
on a terminal one status line redrawn once a second (the checkpoint waited for, then
how much is copied, at what rate, seconds elapsed of the estimate); elsewhere (CI, a
pipe) a line when the checkpoint is done and one at each tenth of the copy."""

from __future__ import annotations

import time

from rich.console import Console
from rich.text import Text

from ..consoles import StatusLine
from ..report.fmt import format_bytes
from ..words import format_duration
from .reading import SourceRead, wait_text

LOG_STEPS = 10


class CopyProgress(StatusLine):
    """Implements servers.physical_copy.BackupProgress for `read`; a context manager
    that clears its line at the end."""

    def __init__(self, console: Console, read: SourceRead) -> None:
        super().__init__(console)
        self.read = read
        self.started = self.copy_started = time.monotonic()
        self.done = self.total = 0
        self.waiting = True

    def checkpoint_done(self) -> None:
        self.waiting = False
        self.copy_started = time.monotonic()
        kind = self.read.pace.checkpoint
        took = self.copy_started - self.started
        self.console.print(
            f"pgopt: the source's {kind} checkpoint took {took:.1f}s; copying",
            markup=False,
            highlight=False,
        )

    def copied(self, done_bytes: int, total_bytes: int) -> None:
        before = self._tenth()
        self.done, self.total = done_bytes, max(total_bytes, 1)
        if self.waiting:  # a pg_basebackup that said nothing of its checkpoint
            self.checkpoint_done()
        if not self.live and self._tenth() > before:
            self.console.print(f"pgopt: {self._copied()}", markup=False, highlight=False)

    def _tenth(self) -> int:
        return self.done * LOG_STEPS // self.total if self.total else 0

    def _copied(self) -> str:
        seconds = time.monotonic() - self.copy_started
        rate = f", {format_bytes(self.done / seconds)}/s" if seconds >= 1 else ""
        return (
            f"copied {format_bytes(self.done)} of {format_bytes(self.total)} "
            f"({self.done / self.total:.0%}{rate}) in {seconds:.0f} s of about "
            f"{format_duration(self.read.transfer_s)}"
        )

    def __rich__(self) -> Text:
        if self.waiting:
            waited = time.monotonic() - self.started
            most = wait_text(self.read.checkpoint_s)
            most = f" (up to {most}, twice if one was under way)" if self.read.spread else ""
            kind = self.read.pace.checkpoint
            text = f"waiting for the source's {kind} checkpoint · {waited:.0f} s{most}"
        else:
            text = self._copied()
        return Text(f"pgopt: copying · {text}")
