"""What the engine tells the person watching a lab run."""

from __future__ import annotations

from typing import Protocol

from ..lab.spec import Step


class Display(Protocol):
    """What the engine tells the person watching."""

    def message(self, text: str) -> None: ...
    def run_started(self, step: Step, label: str, seconds: float | None) -> None: ...
    def phase_started(self, phase: str) -> None: ...
    def phase_finished(self, phase: str, seconds: float) -> None: ...
    def run_finished(self, step: Step, label: str, value: float | None, unit: str) -> None: ...
