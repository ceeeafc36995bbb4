"""Live progress on stderr while a lab runs: step, rep, elapsed time and current rate.

On a terminal a single status line is redrawn; elsewhere (CI, a pipe) one line
is printed per finished run, so logs stay readable.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from .lab.spec import Step
from .pgbench.parse import ProgressSample
from .report.fmt import format_rate


class ConsoleDisplay:
    """Implements experiment.Display on a rich console."""

    def __init__(self, console: Console, lab: str) -> None:
        self.console = console
        self.lab = escape(f"[{lab}]")
        self.live = console.is_terminal
        self._status: Status | None = None
        self._label = ""
        self._seconds: float | None = None
        self._started = 0.0

    def message(self, text: str) -> None:
        self.console.print(f"[dim]{self.lab}[/] {escape(text)}", highlight=False)

    def run_started(self, step: Step, label: str, seconds: float | None) -> None:
        self._label = f"{self.lab} {step.name} · {label}"
        self._seconds = seconds
        self._started = time.monotonic()
        if self.live:
            self._status = self.console.status(self._label)
            self._status.start()

    def progress(self, sample: ProgressSample, per_transaction: float) -> None:
        if self._status is None:
            return
        total = f"/{self._seconds:.0f}" if self._seconds else ""
        self._status.update(
            f"{self._label} · {sample.time_s:.0f}{total} s · "
            f"{format_rate(sample.tps * per_transaction)}/s now"
        )

    def phase_started(self, phase: str) -> None:
        if self._status is not None:
            self._status.update(f"{self._label} · {escape(phase)}")

    def phase_finished(self, phase: str, seconds: float) -> None:
        self.console.print(
            f"[dim]{self._label} · {escape(phase)} {seconds:.1f}s[/]", highlight=False
        )

    def run_finished(self, step: Step, label: str, value: float | None, unit: str) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
        elapsed = time.monotonic() - self._started
        shown = "" if value is None else f" → {format_rate(value)} {unit}"
        self.console.print(
            f"[dim]{self.lab}[/] {step.name} · {label}{shown} [dim]({elapsed:.1f}s)[/]",
            highlight=False,
        )
