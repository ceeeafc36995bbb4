"""Live progress on stderr while a lab runs: step, rep and elapsed time.

On a terminal a single status line is redrawn once a second (it shows whole
seconds; every redraw is pgopt's own CPU during the measured run, written into
result.json's `observer`); elsewhere (CI, a pipe) one line is printed per finished
run, so logs stay readable. The line shows no current rate: reading one would need
pgbench's `-P`, which costs the measured run about 3% of its throughput
(pgbench/transaction_log.py).
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from ..lab.spec import Step
from ..report.fmt import format_rate

REDRAWS_PER_S = 1  # the line counts whole seconds; more would only spin the spinner


class ConsoleDisplay:
    """Implements experiment.Display on a rich console."""

    def __init__(self, console: Console, lab: str) -> None:
        self.console = console
        self.lab = escape(f"[{lab}]")
        self.live = console.is_terminal
        self._status: Status | None = None
        self._label = ""
        self._started = 0.0

    def message(self, text: str) -> None:
        self.console.print(f"[dim]{self.lab}[/] {escape(text)}", highlight=False, markup=True)

    def run_started(self, step: Step, label: str, seconds: float | None) -> None:
        self._label = f"{self.lab} {escape(step.name)} · {escape(label)}"
        self._started = time.monotonic()
        if self.live:
            self._status = self.console.status(
                _Elapsed(self._label, seconds), refresh_per_second=REDRAWS_PER_S
            )
            self._status.start()

    def phase_started(self, phase: str) -> None:
        if self._status is not None:
            self._status.update(_Elapsed(f"{self._label} · {escape(phase)}", None))

    def phase_finished(self, phase: str, seconds: float) -> None:
        self.console.print(
            f"[dim]{self._label} · {escape(phase)} {seconds:.1f}s[/]", highlight=False, markup=True
        )

    def run_finished(self, step: Step, label: str, value: float | None, unit: str) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
        elapsed = time.monotonic() - self._started
        shown = "" if value is None else f" → {format_rate(value)} {unit}"
        self.console.print(
            f"[dim]{self.lab}[/] {escape(step.name)} · {escape(label)}{escape(shown)} "
            f"[dim]({elapsed:.1f}s)[/]",
            highlight=False,
            markup=True,
        )


class _Elapsed:
    """A status text that shows the seconds since it was made each time it is drawn."""

    def __init__(self, label: str, seconds: float | None) -> None:
        self.label, self.started = label, time.monotonic()
        self.total = f"/{seconds:.0f}" if seconds else ""

    def __rich__(self) -> Text:
        return Text.from_markup(
            f"{self.label} · {time.monotonic() - self.started:.0f}{self.total} s"
        )
