"""Where an A/A comparison's noise comes from on this machine (issue 58).

One throwaway server, pgbench's TPC-B-like script on 2 clients (the default lab's
shape), and two experiments:

1. **Within a run**: one long run (`--long` s) with pgbench's per-second progress,
   while a sampler notes, each second, whether a checkpoint was in progress and
   whether an autovacuum worker ran. From the per-second throughput: its noise,
   its autocorrelation, and the share of its variance that seconds with a
   checkpoint or an autovacuum worker explain; then, cut into A/A comparisons of
   runs of L seconds, 1 s apart, each side measured 50 s (10 rounds of 5 s), the
   90% interval's half-width each L gives: where the noise drifts slowly,
   shorter interleaved runs pair more of it away; where it is white, only more
   measured time helps.
2. **Between runs**: `--runs` separate runs of `--duration` s, each started as a lab
   run starts (a CHECKPOINT first): the spread of their throughput against what
   the within-run noise alone predicts for runs that long. The excess is what a
   run's start (its cache, its first checkpoint, its autovacuum) adds.

    .venv/bin/python bench/variance_sources.py [--long 120] [--runs 12] [--duration 5]

Prints the figures; `--json FILE` keeps them.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
from common import DEFAULT_SCALE, server_dsn, stop_cleanly_on_signals

from pgopt.binaries import find_binaries
from pgopt.servers.embedded import EmbeddedTarget

PROGRESS = re.compile(r"progress: (\d+(?:\.\d+)?) s, (\d+(?:\.\d+)?) tps")
LENGTHS = (1, 2, 5, 10)


class Background:
    """Once a second: whether a checkpoint or an autovacuum worker is running."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.seconds: list[tuple[float, bool, bool]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Background:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            while not self._stop.wait(1.0):
                row = conn.execute(
                    "select exists (select 1 from pg_stat_progress_vacuum p join "
                    "pg_stat_activity a using (pid) where a.backend_type = "
                    "'autovacuum worker'), exists (select 1 from pg_stat_activity where "
                    "backend_type = 'checkpointer' and wait_event is distinct from "
                    "'CheckpointerMain')"
                ).fetchone()
                assert row is not None
                self.seconds.append((time.monotonic(), bool(row[0]), bool(row[1])))


def pgbench(server: EmbeddedTarget, seconds: int, *extra: str) -> tuple[list[float], float]:
    """A TPC-B-like run of 2 clients: its per-second tps (with `-P 1`) and its overall tps."""
    pg = find_binaries(None).path("pgbench")
    command = [str(pg), "-c", "2", "-j", "2", "-T", str(seconds), "-n", *extra]
    done = subprocess.run(
        [*command, server_dsn(server)], capture_output=True, text=True, check=True
    )
    per_second = [float(m.group(2)) for m in PROGRESS.finditer(done.stderr)]
    overall = re.search(r"tps = (\d+(?:\.\d+)?)", done.stdout)
    assert overall is not None, done.stdout
    return per_second, float(overall.group(1))


def interleaved(logs: list[float], length: int, gap: int, budget: int) -> float | None:
    """The 90% half-width of an A/A comparison cut from the run: A and B runs of
    `length` seconds, `gap` seconds apart (a run's preparation), pair after pair,
    until each side has `budget` seconds; from the spread of the pairs' ln(B/A) over
    the whole run, as a share (0.03: ±3%)."""
    step = 2 * length + gap
    d = [
        statistics.fmean(logs[t + length + gap : t + step]) - statistics.fmean(logs[t : t + length])
        for t in range(0, len(logs) - step + 1, step)
    ]
    if len(d) < 4:
        return None
    pairs = max(1, budget // length)
    return math.expm1(1.645 * statistics.stdev(d) / math.sqrt(pairs))


def explained(logs: list[float], flags: list[bool]) -> dict[str, float] | None:
    """The seconds with the flag against those without: their share, the mean
    difference on the log scale, and the share of the variance the flag explains."""
    on = [x for x, f in zip(logs, flags, strict=True) if f]
    off = [x for x, f in zip(logs, flags, strict=True) if not f]
    if not on or not off:
        return None
    mean = statistics.fmean(logs)
    between = (
        len(on) * (statistics.fmean(on) - mean) ** 2
        + len(off) * (statistics.fmean(off) - mean) ** 2
    )
    total = sum((x - mean) ** 2 for x in logs)
    return {
        "share_of_seconds": len(on) / len(logs),
        "log_difference": statistics.fmean(on) - statistics.fmean(off),
        "variance_explained": between / total if total else 0.0,
    }


def within_run(server: EmbeddedTarget, seconds: int) -> dict[str, Any]:
    with Background(server_dsn(server)) as background:
        started = time.monotonic()
        tps, _ = pgbench(server, seconds, "-P", "1")
    logs = [math.log(t) for t in tps if t > 0]
    flags = {"autovacuum": [False] * len(logs), "checkpoint": [False] * len(logs)}
    for at, vacuum, checkpoint in background.seconds:
        second = int(at - started)
        if 0 <= second < len(logs):
            flags["autovacuum"][second] |= vacuum
            flags["checkpoint"][second] |= checkpoint
    lag1 = statistics.correlation(logs[:-1], logs[1:]) if len(logs) > 3 else None
    return {
        "seconds": len(logs),
        "per_second_sd": statistics.stdev(logs),
        "lag1_autocorrelation": lag1,
        # each side 50 s measured, as 10 rounds of 5-s runs; runs 1 s apart
        "interleaved_half_width": {str(n): interleaved(logs, n, 1, 50) for n in LENGTHS},
        "autovacuum": explained(logs, flags["autovacuum"]),
        "checkpoint": explained(logs, flags["checkpoint"]),
    }


def between_runs(
    server: EmbeddedTarget, runs: int, seconds: int, per_second_sd: float
) -> dict[str, Any]:
    overall = []
    for _ in range(runs):
        with server.connect("postgres") as conn:
            conn.execute("checkpoint")
        _, tps = pgbench(server, seconds)
        overall.append(math.log(tps))
    observed = statistics.stdev(overall)
    expected = per_second_sd / math.sqrt(seconds)
    return {
        "runs": runs,
        "seconds": seconds,
        "run_sd": observed,
        "expected_from_seconds": expected,
        "excess_variance_share": max(0.0, 1 - expected**2 / observed**2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--long", type=int, default=120, help="seconds of the long run")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--duration", type=int, default=5, help="seconds of each short run")
    parser.add_argument("--scale", type=int, default=DEFAULT_SCALE["tpcb"])
    parser.add_argument("--setting", action="append", default=[], help="NAME=VALUE")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    stop_cleanly_on_signals()
    with EmbeddedTarget(find_binaries(None)) as server:
        with server.connect("postgres") as conn:
            for item in args.setting:
                name, _, value = item.partition("=")
                conn.execute(f"alter system set {name} = '{value}'")
            conn.execute("select pg_reload_conf()")
        pg = find_binaries(None).path("pgbench")
        subprocess.run(
            [str(pg), "-i", "-q", "-s", str(args.scale), server_dsn(server)],
            check=True,
            capture_output=True,
        )
        within = within_run(server, args.long)
        between = between_runs(server, args.runs, args.duration, within["per_second_sd"])
    out: dict[str, Any] = {"command": " ".join(["bench/variance_sources.py", *sys.argv[1:]])}
    out |= {"within_run": within, "between_runs": between}
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
