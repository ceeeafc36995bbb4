"""What a CI gate leaves behind: its lines on the terminal, a JUnit file, the GitHub
step summary, and exit code 1 when it failed. The decision itself is report/gate.py's;
every command that gates a comparison ends with `finish_gate`."""

from __future__ import annotations

import os
from pathlib import Path

from rich.markup import escape

from ..errors import GateFailed, UsageError
from ..report.gate import GateResult, junit_xml, step_summary_markdown
from ..store import write_atomic
from .app import out

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def finish_gate(result: GateResult, *, junit: Path | None, suite: str, title: str) -> None:
    """Print the gate's lines, write --junit FILE, append the Markdown summary to the file
    $GITHUB_STEP_SUMMARY names (when set); raise GateFailed when a step failed."""
    out.print(f"CI gate: {escape(result.gate.description)}")
    for step in result.steps:
        out.print(escape(step.line), style="red" if step.failed else None)
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
    out.print(f"junit: {escape(str(path))}")


def _append_step_summary(path: Path, markdown: str) -> None:
    """Append, never overwrite: earlier steps of the job wrote there too."""
    try:
        with path.open("a", encoding="utf-8") as f:
            f.write("\n" + markdown)
    except OSError as e:
        raise UsageError(f"cannot append to ${STEP_SUMMARY_ENV} {path}: {e.strerror or e}") from e
