"""What pgopt's capture of the source's log costs the source (`ab --source-capture`):
the same pgbench workload on one throwaway PostgreSQL whose logging collector writes
csvlog, its runs in pairs of a random order, one with pgopt's capture (source/
taken_log.py: a second measuring the source's rate, then `log_transaction_sample_rate`
set for the rest of the run, put back, the lines read back over SQL), one without;
pgopt's own paired rule judges the ratio of their rates. pgbench's TPC-B-like
transactions with prepared statements (`-M prepared`), whose values only a log holds.

    .venv/bin/python bench/capture_cost.py [--pairs 8] [--seconds 8] [--clients 2]
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
from pgopt.source.taken_log import TakenLog, take_log


def run(
    pgbench: str, dsn: str, args: argparse.Namespace, captured: bool
) -> tuple[float, TakenLog | None]:
    """One pgbench run's rate, and the capture taken during it when there was one."""
    command = [pgbench, "-n", "-M", "prepared", "-c", str(args.clients)]
    command += ["-j", str(args.clients), "-T", str(args.seconds), dsn]

    def capture() -> TakenLog:
        with read_only.connect(dsn, "capture-cost") as conn:
            return take_log(conn, args.seconds - 2, "the source")

    return pgbench_beside(command, capture if captured else None)


def main() -> None:
    args = cost_arguments(__doc__, seconds=8)
    stop_cleanly_on_signals()
    binaries = find_binaries(None)
    pgbench = str(binaries.path("pgbench"))
    rng = random.Random(args.seed)
    logging = {"logging_collector": "on", "log_destination": "csvlog"}
    with EmbeddedTarget(binaries, base_settings=logging) as target:
        dsn = f"postgresql://postgres@127.0.0.1:{target.port}/pgopt_lab"
        pgbench_tables(pgbench, dsn, args.scale)
        _, _, taken = paired_costs(
            args.pairs, rng, lambda on: run(pgbench, dsn, args, on), "captured"
        )
        rates_taken = sorted(log.rate for log in taken if log is not None)
        size = sorted(len(log.text) >> 10 for log in taken if log is not None)
        print(
            f"the capture logged {rates_taken[0]:.1%}-{rates_taken[-1]:.1%} of the "
            f"transactions for {args.seconds - 2} s of each run, {size[0]:,}-{size[-1]:,} KiB read"
        )


if __name__ == "__main__":
    main()
