"""pgopt's own CPU while pgbench ran, from the result.json of finished lab runs.

Every run's `observer` has `pgopt_cpu_s` (pgopt's whole process, every thread:
the wait sampler, the live status line on a terminal, ...) and `pgbench_wall_s`;
their ratio is the share of one core pgopt took from the workload it measured.
Run a lab under `script` to give it a terminal (its status line redrawn), or
piped (one line per finished run), and compare:

    script -qec ".venv/bin/pgopt lab run smoke --quick --duration 10 --reps 3 --out A" /dev/null
    .venv/bin/pgopt lab run smoke --quick --duration 10 --reps 3 --out B 2>/dev/null
    .venv/bin/python bench/own_cpu.py A B
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def core_shares(result: dict[str, Any]) -> list[float]:
    """pgopt's CPU over pgbench's wall time, one figure per run that has both."""
    shares = []
    for step in result.get("steps", []):
        for run in step.get("runs", []):
            observer = run.get("observer") or {}
            cpu, wall = observer.get("pgopt_cpu_s"), observer.get("pgbench_wall_s")
            if cpu is not None and wall:
                shares.append(cpu / wall)
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (with result.json)")
    for folder in parser.parse_args().runs:
        shares = core_shares(json.loads((folder / "result.json").read_text()))
        if not shares:
            print(f"{folder}: no run with pgopt's CPU in its observer")
            continue
        low, high = min(shares), max(shares)
        print(
            f"{folder}: {len(shares)} runs, pgopt's CPU {statistics.median(shares):.2%} "
            f"of one core (median; {low:.2%} to {high:.2%})"
        )


if __name__ == "__main__":
    main()
