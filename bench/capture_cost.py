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
import re
import subprocess
import threading

import psycopg
from common import stop_cleanly_on_signals

from pgopt.analysis.verdicts import Rule, paired, verdict
from pgopt.binaries import find_binaries
from pgopt.servers import read_only
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.source.taken_log import TakenLog, take_log

TPS = re.compile(r"tps = ([\d.]+)")


def run(
    pgbench: str, dsn: str, args: argparse.Namespace, captured: bool
) -> tuple[float, TakenLog | None]:
    """One pgbench run's rate, and the capture taken during it when there was one."""
    command = [pgbench, "-n", "-M", "prepared", "-c", str(args.clients)]
    command += ["-j", str(args.clients), "-T", str(args.seconds), dsn]
    taken: list[TakenLog] = []

    def capture() -> None:
        with read_only.connect(dsn, "capture-cost") as conn:
            taken.append(take_log(conn, args.seconds - 2, "the source"))

    thread = threading.Thread(target=capture) if captured else None
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if thread is not None:
        thread.start()
    out, _ = proc.communicate()
    if thread is not None:
        thread.join()
    match = TPS.search(out)
    assert match is not None, out
    return float(match.group(1)), (taken[0] if taken else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args()
    stop_cleanly_on_signals()
    binaries = find_binaries(None)
    pgbench = str(binaries.path("pgbench"))
    rng = random.Random(args.seed)
    logging = {"logging_collector": "on", "log_destination": "csvlog"}
    with EmbeddedTarget(binaries, base_settings=logging) as target:
        dsn = f"postgresql://postgres@127.0.0.1:{target.port}/pgopt_lab"
        subprocess.run(
            [pgbench, "-i", "-q", "-s", str(args.scale), dsn], check=True, capture_output=True
        )
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("create extension if not exists pg_stat_statements")
            conn.execute("vacuum analyze")
        alone, captured, taken = [], [], []
        for pair in range(1, args.pairs + 1):
            order = [False, True]
            rng.shuffle(order)
            rates = {}
            for with_capture in order:
                rates[with_capture], log = run(pgbench, dsn, args, with_capture)
                taken += [log] if log is not None else []
            alone.append(rates[False])
            captured.append(rates[True])
            print(f"pair {pair}: alone {rates[False]:,.0f} tx/s, captured {rates[True]:,.0f}")
        result = paired(alone, captured)
        said = verdict(result, higher_is_better=True, rule=Rule())
        low, high = result.ci95
        rates_taken = sorted(log.rate for log in taken)
        size = sorted(len(log.text) >> 10 for log in taken)
        print(
            f"captured / alone: ×{result.ratio:.3f} [{low:.3f}–{high:.3f}] {said}; "
            f"the capture logged {rates_taken[0]:.1%}-{rates_taken[-1]:.1%} of the "
            f"transactions for {args.seconds - 2} s of each run, {size[0]:,}-{size[-1]:,} KiB read"
        )


if __name__ == "__main__":
    main()
