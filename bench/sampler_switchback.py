"""Sampler switchback: what pgopt's wait sampler costs the run it watches, measured
inside one long pgbench run.

harness_cost.py compares whole runs, pgopt's against plain pgbench's; on this
2-core virtual machine a 5-s TPC-B-like run's rate varies by about 8% from one run
to the next (fresh processes, fresh tables, where the scheduler puts them), which
no affordable number of rounds narrows to the 2% the question is about. Within
one run the rate varies far less from one second to the next. So here one pgbench
run lasts the whole bench, and pgopt's own WaitSampler (the same class, rate and
query a lab run uses, watching the same database and application name) is
switched on and off under it in blocks of `--block` seconds: in each pair of
blocks one with the sampler and one without, in an order drawn at random per
pair (a switchback experiment). pgbench reports its rate every second
(`-P 1 --progress-timestamp`, in both blocks alike); the first second of each
block is dropped (the switch itself).

TPC-B-like's rate here holds steady for seconds and then dips by 10 to 50% for a
second or two, at random, sampler or not (a 60-s run: 16k tx/s with dips to 11k
and 7.8k), so a block's mean depends on whether a dip fell in it. The cost is
therefore read two ways. The steady rate: each block's median second, the paired
t interval of sampler-on/sampler-off over the pairs on the log ratios (as pgopt
compares steps), the goal an interval above 0.98. The dips: seconds below 85% of
the run's median, counted with the sampler on and off, compared by Fisher's exact
test (a sampler that stalled the server now and then would show there, not in the
median). The mean of each block's seconds is given too. The sampler's own CPU
(its thread, and the backend serving it, read from /proc since the server runs
here) is given as a share of one core.

What this does not cover is what pgopt does around a run (its settings, snapshots
and warm-up, outside pgbench's timed window) and the flags it runs pgbench with:
harness_cost.py measures those, by pgbench's own CPU per transaction.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from common import DEFAULT_SCALE, SCRIPTS, SMOKE, apply_settings, stop_cleanly_on_signals
from scipy import stats

from pgopt.analysis.verdicts import paired
from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from pgopt.observe.sampler import LAB_SCOPE, WaitSampler, interval_for
from pgopt.psql import Psql
from pgopt.servers.base import BENCH_APPLICATION, LAB_DATABASE
from pgopt.servers.embedded import EmbeddedTarget

WARMUP_S = 5
LAB_RUN_S = 20  # the labs' run length: the sampler's rate is the one such a run gets
GOAL = 0.98
DIP = 0.85  # a second this far below the run's median rate is a dip
PROGRESS = re.compile(r"progress: ([0-9.]+) s, ([0-9.]+) tps")


@dataclass(frozen=True)
class Block:
    """A stretch of the run with the sampler on or off, in epoch seconds."""

    sampler: bool
    start: float
    end: float


def block_seconds(block: Block, seconds: list[tuple[float, float]]) -> list[float]:
    """pgbench's rates for the whole seconds inside `block` (its line at t covers
    (t - 1, t]), the block's first second (the switch) left out."""
    return [tps for at, tps in seconds if at - 1 >= block.start + 1 and at <= block.end]


def pairs_of(
    blocks: list[Block], seconds: list[tuple[float, float]]
) -> list[tuple[list[float], list[float]]]:
    """(seconds off, seconds on) for every pair of blocks that both have seconds."""
    out = []
    for first, second in zip(blocks[::2], blocks[1::2], strict=True):
        rates = {b.sampler: block_seconds(b, seconds) for b in (first, second)}
        if rates[False] and rates[True]:
            out.append((rates[False], rates[True]))
    return out


def dip_counts(pairs: list[tuple[list[float], list[float]]]) -> dict[str, list[int]]:
    """Seconds below DIP x the median of every kept second, and all seconds, with the
    sampler off and on: [dips, seconds]."""
    threshold = DIP * statistics.median(x for pair in pairs for side in pair for x in side)
    counts = {"off": [0, 0], "on": [0, 0]}
    for pair in pairs:
        for side, rates in zip(("off", "on"), pair, strict=True):
            counts[side][0] += sum(1 for x in rates if x < threshold)
            counts[side][1] += len(rates)
    return counts


def main() -> None:
    stop_cleanly_on_signals()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workload", choices=sorted(SCRIPTS), default="tpcb")
    parser.add_argument("--scale", type=int, help="10 for tpcb, 2 for select")
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--block", type=int, default=10, help="seconds per block")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    scale = args.scale or DEFAULT_SCALE[args.workload]
    if args.block < 3 or args.pairs < 2:
        raise SystemExit("--block: at least 3 seconds; --pairs: at least 2")
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    rng = random.Random(args.seed)
    orders = [rng.random() < 0.5 for _ in range(args.pairs)]  # True: sampler first
    with EmbeddedTarget(binaries) as server:
        apply_settings(server, args.setting)  # the server made LAB_DATABASE
        env = {**server.client_env(), "PGDATABASE": LAB_DATABASE, "PGAPPNAME": BENCH_APPLICATION}
        psql = Psql(binaries, env)
        psql.run_file(SMOKE / "pgbench_tables.sql", {"scale_factor": str(scale)}, what="setup")
        psql.run("checkpoint", {}, what="checkpoint")
        total_s = WARMUP_S + 2 * args.pairs * args.block + 2
        command = [str(binaries.path("pgbench")), "-n", "-b", SCRIPTS[args.workload]]
        command += ["-c", "2", "-j", "2", "-T", str(total_s), "-P", "1", "--progress-timestamp"]
        command += [f"--random-seed={args.seed}"]
        with tempfile.TemporaryFile("w+") as progress:
            pgbench = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=progress)
            try:
                blocks, costs = _switch(server, orders, args.block)
                pgbench.communicate(timeout=total_s + 60)
            finally:
                if pgbench.poll() is None:
                    pgbench.kill()
                    pgbench.wait()
            progress.seek(0)
            seconds = [(float(m[1]), float(m[2])) for m in PROGRESS.finditer(progress.read())]
    if pgbench.returncode != 0:
        raise SystemExit(f"pgbench failed (exit {pgbench.returncode})")
    summary = _summary(args, scale, blocks, seconds, costs)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


def _switch(
    server: EmbeddedTarget, orders: list[bool], block_s: int
) -> tuple[list[Block], list[dict[str, float]]]:
    """The warm-up, then each pair's two blocks in its order; the sampler's own CPU
    in each block it ran."""
    time.sleep(WARMUP_S)
    blocks: list[Block] = []
    costs: list[dict[str, float]] = []
    for number, sampler_first in enumerate(orders, start=1):
        for sampler in (sampler_first, not sampler_first):
            start = time.time()
            if sampler:
                with WaitSampler(server, LAB_SCOPE, interval_for(LAB_RUN_S)) as watching:
                    time.sleep(block_s)
                wall = time.time() - start
                costs.append(
                    {
                        "thread": watching.cost.client_cpu_s / wall,
                        "backend": (watching.cost.server_cpu_s or 0.0) / wall,
                        "samples": watching.samples,
                    }
                )
                if watching.error:
                    raise SystemExit(f"sampler failed: {watching.error}")
            else:
                time.sleep(block_s)
            blocks.append(Block(sampler, start, time.time()))
        print(f"pair {number}/{len(orders)}", file=sys.stderr)
    return blocks, costs


def _summary(
    args: argparse.Namespace,
    scale: int,
    blocks: list[Block],
    seconds: list[tuple[float, float]],
    costs: list[dict[str, float]],
) -> dict[str, Any]:
    pairs = pairs_of(blocks, seconds)
    if len(pairs) < 2:
        raise SystemExit("fewer than 2 pairs of blocks with pgbench's rates: nothing to compare")
    steady = _ratio(
        [statistics.median(off) for off, _ in pairs], [statistics.median(on) for _, on in pairs]
    )
    mean = _ratio(
        [statistics.fmean(off) for off, _ in pairs], [statistics.fmean(on) for _, on in pairs]
    )
    dips = dip_counts(pairs)
    (dips_off, seconds_off), (dips_on, seconds_on) = dips["off"], dips["on"]
    _, dip_p = stats.fisher_exact(
        np.array([[dips_on, seconds_on - dips_on], [dips_off, seconds_off - dips_off]])
    )
    low, high = steady["ci95"]
    print(
        f"sampler on/off, steady rate: {steady['ratio']:.4f} [95% {low:.4f}-{high:.4f}]; "
        f"mean rate {mean['ratio']:.4f} {mean['ci95']}; dip seconds {dips_on}/{seconds_on} "
        f"on, {dips_off}/{seconds_off} off (p = {dip_p:.3f}); {len(pairs)} pairs",
        file=sys.stderr,
    )
    return {
        "command": "bench/sampler_switchback.py " + " ".join(sys.argv[1:]),
        "workload": args.workload,
        "scale": scale,
        "settings": args.setting,
        "block_s": args.block,
        "sampler_interval_s": interval_for(LAB_RUN_S),
        "pairs": len(pairs),
        "tps_median": {
            "off": round(statistics.median(x for off, _ in pairs for x in off)),
            "on": round(statistics.median(x for _, on in pairs for x in on)),
        },
        # each block's median second: the rate between dips
        "steady_on_vs_off": steady,
        # each block's mean second: dips included
        "mean_on_vs_off": mean,
        "dip_seconds": {
            "below": f"{DIP} x the median second",
            "on": dips["on"],
            "off": dips["off"],
            "fisher_exact_p": round(float(dip_p), 4),
        },
        "goal": {
            "question": f"sampler on/off above {GOAL} (steady rate), no more dips with it",
            "decision": "above" if low > GOAL else "below" if high < GOAL else "undecided",
        },
        "sampler_core_share": {
            part: round(statistics.fmean(c[part] for c in costs), 5)
            for part in ("thread", "backend")
        },
        "samples_per_block": statistics.median(c["samples"] for c in costs),
        "blocks": [[b.sampler, round(b.start, 3), round(b.end, 3)] for b in blocks],
        "seconds": [[round(at, 3), tps] for at, tps in seconds],
    }


def _ratio(off: list[float], on: list[float]) -> dict[str, Any]:
    """on/off, paired by block pair, with its 95% interval and the SD of the pairs' log
    ratios."""
    e = paired(off, on)
    sd = statistics.stdev(math.log(b / a) for a, b in zip(off, on, strict=True))
    return {
        "ratio": round(e.ratio, 4),
        "ci95": [round(e.ci95[0], 4), round(e.ci95[1], 4)],
        "sd_log_ratio_per_pair": round(sd, 4),
    }


if __name__ == "__main__":
    main()
