"""Where pgopt prints: results on stdout (`out`), progress and notes on stderr (`err`),
both rich consoles, wide enough for the summary table in a log or a pipe.

Markup is off unless a line asks for it (`markup=True`, its own parts escaped): a
name or a statement read from a user's server is printed as it is, whatever
brackets it holds (`arr[i]`, `'[/]'` would be taken for tags, or refused)."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.status import Status
from rich.text import Text


def _console(stderr: bool = False) -> Console:
    console = Console(stderr=stderr, highlight=False, markup=False)
    if not console.is_terminal:  # logs and pipes: wide enough for the summary table
        console = Console(stderr=stderr, highlight=False, markup=False, width=140)
    return console


out = _console()
err = _console(stderr=True)


class StatusLine:
    """Progress of long work: on a terminal, one status line its `__rich__` redraws
    once a second, cleared at the end; elsewhere (CI, a pipe) nothing of its own, its
    subclass printing lines instead. A context manager."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self._status: Status | None = None

    def __enter__(self) -> Self:
        if self.live:
            self._status = self.console.status(self, refresh_per_second=1)
            self._status.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __rich__(self) -> Text:
        raise NotImplementedError


def say_written(paths: list[Path]) -> None:
    """The reports a command wrote, one line each on stdout."""
    for path in paths:
        out.print(f"report: {path}")
