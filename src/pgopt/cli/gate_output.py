"""A CI gate on the command line: its options (`gate_options`, shared by `compare` and
`ab`), and what it leaves behind: its lines on the terminal, a JUnit file, the GitHub
step summary, and exit code 1 when it failed. The decision itself is gate/decision.py's;
every command that gates a comparison ends with `finish_gate`."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..consoles import out
from ..errors import GateFailed, UsageError
from ..gate.decision import Gate, GateResult, junit_xml, step_summary_markdown
from ..store import write_atomic

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
F = TypeVar("F", bound=Callable[..., Any])


def _percent_as_fraction(
    _ctx: click.Context, _param: click.Parameter, value: float | None
) -> float | None:
    """--fail-on-regression 5 as 0.05; its FloatRange lets nan through, so it stops here."""
    if value is not None and math.isnan(value):
        raise click.BadParameter("nan is not a percentage")
    return None if value is None else value / 100


GATE_OPTIONS = (
    click.option(
        "--fail-on-regression",
        "regression",
        type=click.FloatRange(0, 100, min_open=True, max_open=True),
        callback=_percent_as_fraction,
        metavar="PCT",
        help="Exit 1 when a step is slower by at least PCT percent.",
    ),
    click.option(
        "--require-decision",
        is_flag=True,
        help="Exit 1 when a step is inconclusive (or n/a): no verdict either way.",
    ),
    click.option(
        "--junit",
        type=click.Path(path_type=Path, dir_okay=False),
        metavar="FILE",
        help="Write the gate as JUnit XML, one test case per step.",
    ),
)


def gate_options(command: F) -> F:
    """--fail-on-regression, --require-decision, --junit."""
    for option in reversed(GATE_OPTIONS):
        command = option(command)
    return command


def gate_of(regression: float | None, require_decision: bool, junit: Path | None) -> Gate:
    gate = Gate(regression, require_decision)
    if junit is not None and not gate.on:
        raise UsageError("--junit goes with --fail-on-regression or --require-decision")
    return gate


def finish_gate(result: GateResult, *, junit: Path | None, suite: str, title: str) -> None:
    """Print the gate's lines, write --junit FILE, append the Markdown summary to the file
    $GITHUB_STEP_SUMMARY names (when set); raise GateFailed when a step failed."""
    out.print(f"CI gate: {result.gate.description}")
    for step in result.steps:
        out.print(step.line, style="red" if step.failed else None)
    if junit is not None:
        _write_junit(junit, junit_xml(result, suite))
    summary = os.environ.get(STEP_SUMMARY_ENV)
    if summary:
        _append_step_summary(Path(summary), step_summary_markdown(result, title))
    if result.failed:
        raise GateFailed(result.message())


def _write_junit(path: Path, xml: str) -> None:
    try:
        write_atomic(path, xml)
    except OSError as e:
        raise UsageError(f"cannot write --junit {path}: {e.strerror or e}") from e
    out.print(f"junit: {path}")


def _append_step_summary(path: Path, markdown: str) -> None:
    """Append, never overwrite: earlier steps of the job wrote there too."""
    try:
        with path.open("a", encoding="utf-8") as f:
            f.write("\n" + markdown)
    except OSError as e:
        raise UsageError(f"cannot append to ${STEP_SUMMARY_ENV} {path}: {e.strerror or e}") from e
