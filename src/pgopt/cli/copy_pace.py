"""The options of a physical copy's pace (`ab`, and `advise --prove`'s copies), read into
ab/reading.py's CopyPace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..ab.reading import CHECKPOINTS, CopyPace, copy_pace

F = TypeVar("F", bound=Callable[..., Any])


def copy_pace_options(whose: str) -> Callable[[F], F]:
    """--copy-rate and --copy-checkpoint of `whose` physical copy ("A", "--prove's"),
    in the order --help shows them."""

    def add(command: F) -> F:
        return _rate(whose, _checkpoint(whose, command))

    return add


def _checkpoint(whose: str, command: F) -> F:
    return click.option(
        "--copy-checkpoint",
        type=click.Choice(CHECKPOINTS),
        help=f"{whose} physical copy's checkpoint on the source: spread (the default: paced as "
        "its own, the copy may wait up to checkpoint_timeout x "
        "checkpoint_completion_target) or fast (at once: its dirty pages written in a "
        "burst).",
    )(command)


def _rate(whose: str, command: F) -> F:
    return click.option(
        "--copy-rate",
        metavar="RATE",
        help=f"{whose} physical copy reads the source at most at RATE a second (pg_basebackup's "
        "--max-rate: 50M, 1G; a bare number is kB): 50M by default; 0 or max: no limit.",
    )(command)


def pace_of(options: dict[str, Any]) -> CopyPace:
    """The pace the options ask for (taken out of `options`); one clear error for a
    rate that is not one."""
    return copy_pace(options.pop("copy_rate"), options.pop("copy_checkpoint"))
