"""What pgopt's watch costs the source: the same pgbench workload on one throwaway
PostgreSQL, its runs in pairs of a random order, one with `pgopt ab`'s watch reading the
source all the while (pg_stat_activity twice a second, and a hundred times a second
the calls sent with literals: source/watch.py), one without; pgopt's own paired rule
judges the ratio of their rates. pgbench sends its values as literals (`-M simple`),
so every look finds calls to read: the watch's costliest case.

    .venv/bin/python bench/watch_cost.py [--pairs 8] [--seconds 6] [--clients 2]
"""

from __future__ import annotations

import argparse
import random

from common import (
    cost_arguments,
    paired_costs,
    pgbench_beside,
    pgbench_tables,
    stop_cleanly_on_signals,
)

from pgopt.binaries import find_binaries
from pgopt.servers import read_only
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.source.watch import how_clients_ran


def run(pgbench: str, dsn: str, args: argparse.Namespace, watched: bool) -> tuple[float, int]:
    """One pgbench run's rate, and the calls the watch read when there was one."""
    command = [pgbench, "-n", "-S", "-M", "simple", "-c", str(args.clients)]
    command += ["-j", str(args.clients), "-T", str(args.seconds), dsn]

    def watch() -> int:
        with read_only.connect(dsn, "watch-cost") as conn:
            return len(how_clients_ran(conn, args.seconds - 1).literal_calls)

    rate, seen = pgbench_beside(command, watch if watched else None)
    return rate, seen or 0


def main() -> None:
    args = cost_arguments(__doc__, seconds=6)
    stop_cleanly_on_signals()
    binaries = find_binaries(None)
    pgbench = str(binaries.path("pgbench"))
    rng = random.Random(args.seed)
    with EmbeddedTarget(binaries) as target:
        dsn = f"postgresql://postgres@127.0.0.1:{target.port}/pgopt_lab"
        pgbench_tables(pgbench, dsn, args.scale)
        _, _, calls = paired_costs(
            args.pairs, rng, lambda on: run(pgbench, dsn, args, on), "watched"
        )
        print(f"the watch read {min(calls):,}-{max(calls):,} calls with literals a run")


if __name__ == "__main__":
    main()
