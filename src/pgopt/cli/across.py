"""`--a-pg-bin DIR --b-pg-bin DIR`: the options of a lab, or `pgopt ab`, across two
PostgreSQL installations (running/across.py finds them, lab/across.py places the steps)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

ACROSS_OPTIONS = (
    click.option(
        "--a-pg-bin",
        metavar="DIR",
        help="Across versions: A (each step's first side) on a throwaway server of the "
        "PostgreSQL programs in DIR (default: --pg-bin's).",
    ),
    click.option(
        "--b-pg-bin",
        metavar="DIR",
        help="Across versions: B (each step's second side) on a server of these programs.",
    ),
)


def across_options(command: F) -> F:
    for option in reversed(ACROSS_OPTIONS):
        command = option(command)
    return command
