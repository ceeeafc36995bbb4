"""Where pgopt prints: results on stdout (`out`), progress and notes on stderr (`err`),
both rich consoles, wide enough for the summary table in a log or a pipe.

Markup is off unless a line asks for it (`markup=True`, its own parts escaped): a
name or a statement read from a user's server is printed as it is, whatever
brackets it holds (`arr[i]`, `'[/]'` would be taken for tags, or refused)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console


def _console(stderr: bool = False) -> Console:
    console = Console(stderr=stderr, highlight=False, markup=False)
    if not console.is_terminal:  # logs and pipes: wide enough for the summary table
        console = Console(stderr=stderr, highlight=False, markup=False, width=140)
    return console


out = _console()
err = _console(stderr=True)


def say_written(paths: list[Path]) -> None:
    """The reports a command wrote, one line each on stdout."""
    for path in paths:
        out.print(f"report: {path}")
