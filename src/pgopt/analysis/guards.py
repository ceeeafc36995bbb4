"""Validity guards: reasons a run's figure may not mean what it seems.

Pure functions over a run's facts; each returns warnings (text) that go into
the summary and result.json.
"""

from __future__ import annotations

import re

from ..words import plural

MIN_SECONDS = 10
CLIENT_CPU_SATURATED = 0.9


def run_warnings(
    *,
    client_cpu_s: float,
    wall_s: float,
    threads: int,
    failed: int,
    checkpoints: int,
    duration_s: float | None,
    quick: bool,
) -> list[str]:
    """Warnings about one pgbench run."""
    out: list[str] = []
    if wall_s > 0 and threads > 0 and client_cpu_s / (wall_s * threads) > CLIENT_CPU_SATURATED:
        out.append(
            f"pgbench itself was CPU-bound ({client_cpu_s / wall_s:.2f} cores busy for "
            f"{threads} threads): the figure may measure the client, not the server"
        )
    if failed:
        out.append(f"{plural(failed, 'transaction')} failed")
    if checkpoints:
        out.append(f"{checkpoints} checkpoint(s) started inside the timed run")
    if duration_s is not None and duration_s < MIN_SECONDS and not quick:
        out.append(f"run of {duration_s:.0f}s is shorter than {MIN_SECONDS}s")
    return out


OWN_CPU_SHARE = 0.02
OWN_CPU_MIN_WALL_S = 1.0


def harness_warning(own_cpu_s: float, wall_s: float, cpus: int) -> str | None:
    """pgopt's own CPU (its process and its sampler's backend) above 2% of the machine's
    during a run: the observer may have changed what it observed. A run shorter than a
    second is not judged: the sampler's first connection alone would dominate it."""
    if wall_s < OWN_CPU_MIN_WALL_S or cpus <= 0:
        return None
    share = own_cpu_s / (wall_s * cpus)
    if share <= OWN_CPU_SHARE:
        return None
    return (
        f"pgopt itself used {share:.1%} of the machine's CPU during the run "
        f"({own_cpu_s:.2f} s of {wall_s:.1f} s on {cpus} CPUs): the figure may be lower "
        "than without it"
    )


def contention_warning(rows: int, clients: int, table: str) -> str | None:
    """A contention workload on fewer rows than clients measures something else."""
    if rows < clients:
        return (
            f"{table} has {plural(rows, 'row')} for {plural(clients, 'client')}: clients "
            "contend for rows that are not there"
        )
    return None


_FIGURE = re.compile(r"\d+(?:\.\d+)?")


def merge(warnings: list[list[str]]) -> list[str]:
    """Distinct warnings of several runs, with how many runs had each; warnings that
    differ only in their figures are one, with the figures' range ('54–59 checkpoints')."""
    figures: dict[str, list[list[str]]] = {}
    for run in warnings:
        for w in run:
            shape = _FIGURE.sub("\0", w)
            figures.setdefault(shape, []).append(_FIGURE.findall(w))
    total = len(warnings)
    out = []
    for shape, seen in figures.items():
        ranges = []
        for values in zip(*seen, strict=True):
            low, high = min(values, key=float), max(values, key=float)
            ranges.append(low if float(low) == float(high) else f"{low}–{high}")
        parts = shape.split("\0")
        text = parts[0] + "".join(r + p for r, p in zip(ranges, parts[1:], strict=True))
        n = len(seen)
        out.append(text if n == total or total == 1 else f"{text} ({n} of {plural(total, 'run')})")
    return out
