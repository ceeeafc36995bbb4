"""Whole outputs against golden files: the terminal summary at a fixed width, report.md,
report.html (plots and version taken out) and the help of every command.

A deliberate change to an output: run `PGOPT_UPDATE_GOLDEN=1 pytest tests/unit/test_golden.py`,
read the diff of tests/golden/, and commit it with the change.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from pgopt import __version__
from pgopt.cli import cli
from pgopt.model.result import LabResult
from pgopt.report.html import render_html
from pgopt.report.markdown import render_markdown
from pgopt.report.terminal import print_summary
from pgopt.store import load_result

GOLDEN = Path(__file__).parent.parent / "golden"
RESULTS = Path(__file__).parent.parent / "data" / "results"
FIXTURES = (
    "smoke-a",
    "smoke-c",
    "replicas-quick",
    "ab-replay",
    "ab-index",
)  # an older result (2 runs a side), one of
# the current rule, a lab of four families in three units (replicas), a replay of
# sysbench's oltp_write_only with its fidelity (pgopt ab --synthesize), and an A/B whose
# B adds an index, with each step's plans (pgopt ab examples/orders --duration 2)
COMMANDS: tuple[list[str], ...] = (
    [],
    ["lab"],
    ["lab", "list"],
    ["lab", "run"],
    ["runs"],
    ["report"],
    ["compare"],
    ["ab"],
    ["advise"],
    ["tune"],
)


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("PGOPT_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"no golden file {path}: run with PGOPT_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{name} differs from tests/golden/{name}"


def result(name: str) -> LabResult:
    return load_result(RESULTS / name)


@pytest.mark.parametrize("fixture", FIXTURES)
def test_terminal_summary(fixture: str) -> None:
    console = Console(width=120, record=True, color_system=None, force_terminal=False)
    print_summary(console, result(fixture))
    check(f"{fixture}.terminal.txt", console.export_text())


@pytest.mark.parametrize("fixture", FIXTURES)
def test_markdown_report(fixture: str) -> None:
    check(f"{fixture}.report.md", render_markdown(result(fixture)))


def normalized_html(html: str) -> str:
    html = re.sub(r"<svg\b.*?</svg>", "<svg>(plot)</svg>", html, flags=re.S)
    return html.replace(__version__, "VERSION")


@pytest.mark.parametrize("fixture", FIXTURES)
def test_html_report(fixture: str) -> None:
    check(f"{fixture}.report.html", normalized_html(render_html(result(fixture))))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c) or "pgopt")
def test_help(command: list[str]) -> None:
    out = CliRunner().invoke(cli, [*command, "--help"], prog_name="pgopt", terminal_width=100)
    assert out.exit_code == 0, out.output
    check(f"help/{'-'.join(command) or 'pgopt'}.txt", out.output)
