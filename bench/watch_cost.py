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
import re
import subprocess
import threading

import psycopg
from common import stop_cleanly_on_signals

from pgopt.analysis.verdicts import Rule, paired, verdict
from pgopt.binaries import find_binaries
from pgopt.servers import read_only
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.source.watch import how_clients_ran

TPS = re.compile(r"tps = ([\d.]+)")


def run(pgbench: str, dsn: str, args: argparse.Namespace, watched: bool) -> tuple[float, int]:
    """One pgbench run's rate, and the calls the watch read when there was one."""
    command = [pgbench, "-n", "-S", "-M", "simple", "-c", str(args.clients)]
    command += ["-j", str(args.clients), "-T", str(args.seconds), dsn]
    seen: list[int] = []

    def watch() -> None:
        with read_only.connect(dsn, "watch-cost") as conn:
            seen.append(len(how_clients_ran(conn, args.seconds - 1).literal_calls))

    thread = threading.Thread(target=watch) if watched else None
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if thread is not None:
        thread.start()
    out, _ = proc.communicate()
    if thread is not None:
        thread.join()
    match = TPS.search(out)
    assert match is not None, out
    return float(match.group(1)), (seen[0] if seen else 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args()
    stop_cleanly_on_signals()
    binaries = find_binaries(None)
    pgbench = str(binaries.path("pgbench"))
    rng = random.Random(args.seed)
    with EmbeddedTarget(binaries) as target:
        dsn = f"postgresql://postgres@127.0.0.1:{target.port}/pgopt_lab"
        subprocess.run(
            [pgbench, "-i", "-q", "-s", str(args.scale), dsn], check=True, capture_output=True
        )
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("vacuum analyze")
        alone, watched, calls = [], [], []
        for pair in range(1, args.pairs + 1):
            order = [False, True]
            rng.shuffle(order)
            rates = {}
            for with_watch in order:
                rates[with_watch], seen = run(pgbench, dsn, args, with_watch)
                calls += [seen] if with_watch else []
            alone.append(rates[False])
            watched.append(rates[True])
            print(f"pair {pair}: alone {rates[False]:,.0f} tx/s, watched {rates[True]:,.0f}")
        result = paired(alone, watched)
        said = verdict(result, higher_is_better=True, rule=Rule())
        low, high = result.ci95
        print(
            f"watched / alone: ×{result.ratio:.3f} [{low:.3f}–{high:.3f}] {said}; "
            f"the watch read {min(calls):,}-{max(calls):,} calls with literals a run"
        )


if __name__ == "__main__":
    main()
