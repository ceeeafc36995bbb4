"""Commands over stored runs, no server needed: `runs`, `report`, `compare`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from ..consoles import out, say_written
from ..gate.decision import evaluate, items_of
from ..report.compare import compare_results, comparison_notes
from ..report.listing import runs_table
from ..report.terminal import comparison_table, print_summary
from ..report.write import write_reports
from ..store import DEFAULT_RUNS_DIR, list_runs, load_result
from .gate_output import finish_gate, gate_of, gate_options


@click.command("runs")
@click.option(
    "--dir",
    "runs_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_RUNS_DIR,
    show_default=True,
    help="Folder of stored runs.",
)
def runs_cmd(runs_dir: Path) -> None:
    """List stored runs: date, lab, steps, headline ratio with its verdict, status."""
    runs = list_runs(runs_dir)
    if not runs:
        out.print(f"no runs in {runs_dir}")
        return
    out.print(runs_table(runs))


@click.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--html", "html", is_flag=True, help="Write report.html (with plots).")
@click.option("--md", "md", is_flag=True, help="Write report.md.")
def report_cmd(run_dir: Path, html: bool, md: bool) -> None:
    """Re-render a stored run from its result.json (no server needed).

    Writes report.md and report.html next to result.json (only the ones asked
    for with --md/--html) and prints the summary.
    """
    result = load_result(run_dir)
    folder = run_dir if run_dir.is_dir() else run_dir.parent
    both = not (html or md)
    print_summary(out, result)
    say_written(write_reports(folder, result, markdown=md or both, html=html or both))


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@gate_options
def compare_cmd(
    run_a: Path, run_b: Path, regression: float | None, require_decision: bool, junit: Path | None
) -> None:
    """Two runs of one lab side by side: B's medians over A's, with 95% intervals.

    A CI gate fails a step, and the command exits 1, when

    \b
    - its verdict is `slower` (B/A's test rejects "no change" at 5% after
      Benjamini-Hochberg across the steps, so its 95% interval excludes 1)
      and its slowdown is at least --fail-on-regression PCT percent:
      1 - B/A for a higher-is-better metric (tx/s), B/A - 1 for a
      lower-is-better one (seconds);
    - or its verdict is inconclusive or n/a, with --require-decision.

    \b
    Steps that are faster or no-change never fail it; with neither option
    there is no gate. The gate prints one line per step, writes --junit
    FILE, and appends a Markdown table to the file $GITHUB_STEP_SUMMARY
    names, when set.
    """
    gate = gate_of(regression, require_decision, junit)
    comparison = compare_results(load_result(run_a), load_result(run_b))
    out.print(comparison_table(comparison, str(run_a), str(run_b)))
    for note in comparison_notes(comparison):
        out.print(f"[yellow]note[/] {escape(note)}", markup=True)
    if gate.on:
        title = f"pgopt compare {comparison.lab}: B = {run_b} vs A = {run_a}"
        result = evaluate(gate, items_of(comparison))
        finish_gate(result, junit=junit, suite=f"pgopt.{comparison.lab}", title=title)
