"""The options of every command that runs a lab (`lab run`, `ab`, `tune --measure`), in
the order --help shows them; running/options.py reads them into RunOptions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..params import LATENCY_RUNS
from .connection import DSN

F = TypeVar("F", bound=Callable[..., Any])

RUN_OPTIONS = (
    click.option("--quick", is_flag=True, help="Few short reps at a small scale (demos, CI)."),
    click.option("--duration", type=int, help="Seconds per timed run."),
    click.option(
        "--warmup",
        type=click.IntRange(min=0),
        help="Seconds of the workload before each timed run (default: the lab's, at most "
        "--duration).",
    ),
    click.option(
        "--slice",
        "slice_s",
        type=int,
        help="Seconds of a slice: each side's run is cut into slices that take turns with "
        "the other sides' (default 1; 0 runs each side whole).",
    ),
    click.option(
        "--reps",
        help="Rounds: 'auto' (look after 4, 6, 8, 10 and stop when decided) or a fixed count.",
    ),
    click.option(
        "--margin",
        type=float,
        help="Smallest change that matters, in percent (default 3): within it, 'no-change'.",
    ),
    click.option(
        "--clients", type=int, help="pgbench clients for every step (client sweeps keep theirs)."
    ),
    click.option(
        "--dsn", **DSN, help="Run on your server (pgopt works in its own database pgopt_lab)."
    ),
    click.option("--allow-settings", is_flag=True, help="With --dsn: let pgopt change settings."),
    click.option("--pg-bin", type=str, help="Folder of PostgreSQL programs to use."),
    click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Folder for this run."),
    click.option("--seed", type=int, default=1, show_default=True, help="Random seed."),
    click.option(
        "--workdir", type=click.Path(path_type=Path), help="Where the embedded server lives."
    ),
    click.option(
        "--keep", is_flag=True, help="Leave the server (or pgopt_lab) in place afterwards."
    ),
    click.option(
        "--no-sampler", is_flag=True, help="Do not sample wait events (to measure its cost)."
    ),
    click.option(
        "--latencies",
        type=click.Choice(LATENCY_RUNS),
        default="first",
        show_default=True,
        help="Runs in which pgbench times every transaction and statement (latency "
        "percentiles, throughput per second, stall checks): the first round's, all "
        "(about 2% slower where pgbench is the bottleneck), or none.",
    ),
    click.option(
        "--dry-run", is_flag=True, help="Print the plan (steps, rounds, orders) and start nothing."
    ),
)


def run_options(command: F) -> F:
    """The options of every command that runs a lab, in the order --help shows them."""
    for option in reversed(RUN_OPTIONS):
        command = option(command)
    return command
