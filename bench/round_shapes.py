"""Which shape of round gives the narrowest A/A interval at the same measured time
(issue 58)?

One throwaway server, pgbench's TPC-B-like script on 2 clients, each side of a
round measured `--seconds` s (10: `pgopt ab`'s default run), two identical steps:

- `runs`: what pgopt does today. Each side gets its own clone of the template, a
  CHECKPOINT, then one run of `--seconds`; the two sides in a random order.
- `slices-N`: both sides get their clone and the CHECKPOINT first; then the two
  alternate runs of N seconds (each pair in a random order) until each side has
  `--seconds`. The side's value is its transactions over its seconds.

The shapes take turns, round after round, so the machine's drift falls on all of
them alike. Per shape: the spread of a round's ln(B/A), the 90% half-width that
10 rounds of it would give, and the wall time a round took. The figures go to
docs/method.md and bench/README.md.

With a B that differs (`--b-builtin select-only`, `--b-options "-c
synchronous_commit=off"`), the shapes' mean ratios say whether slices carry one
side's after-effects into the other's turns (dirty buffers, WAL, vacuum work
left behind: only one CHECKPOINT a round where whole runs get one each): a
sliced ratio that differs from the whole runs' beyond their intervals would be
a bias.

    .venv/bin/python bench/round_shapes.py [--rounds 12] [--seconds 10] \
        [--shapes runs,slices-1,slices-2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import DEFAULT_SCALE, apply_settings, stop_cleanly_on_signals

from pgopt.binaries import find_binaries
from pgopt.servers.embedded import EmbeddedTarget

TRANSACTIONS = re.compile(r"number of transactions actually processed: (\d+)")
LATENCY = re.compile(r"tps = (\d+(?:\.\d+)?)")
SIDES = ("a", "b")


def dsn(server: EmbeddedTarget, database: str) -> str:
    return f"postgresql:///{database}?host={server.socket_dir}&port={server.port}&user=postgres"


B_SIDE: dict[str, list[str]] = {"builtin": [], "options": []}  # --b-builtin, --b-options


def pgbench(server: EmbeddedTarget, database: str, seconds: int, seed: int) -> float:
    """One run: its transactions a second (pgbench's, connections excluded)."""
    pg = find_binaries(None).path("pgbench")
    builtin = B_SIDE["builtin"] if database == "b" else []
    env = dict(os.environ)
    if database == "b" and B_SIDE["options"]:
        env["PGOPTIONS"] = " ".join(B_SIDE["options"])
    done = subprocess.run(
        [
            str(pg), "-n", "-c", "2", "-j", "2", "-T", str(seconds),
            *(["-b", builtin[0]] if builtin else []),
            f"--random-seed={seed}", dsn(server, database),
        ],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    found = LATENCY.search(done.stdout)
    assert found is not None, done.stdout
    return float(found.group(1))


def fresh(server: EmbeddedTarget, database: str) -> None:
    """The side's database made again from the template, as a lab run's clone is."""
    with server.connect("postgres") as conn:
        conn.execute(f"drop database if exists {database}")
        conn.execute(f"create database {database} template pgopt_template strategy file_copy")


def checkpoint(server: EmbeddedTarget) -> None:
    with server.connect("postgres") as conn:
        conn.execute("checkpoint")


def round_of_runs(server: EmbeddedTarget, seconds: int, rng: random.Random) -> dict[str, float]:
    seed = rng.randrange(1, 2**31)
    values = {}
    for side in rng.sample(SIDES, 2):
        fresh(server, side)
        checkpoint(server)
        values[side] = pgbench(server, side, seconds, seed)
    return values


def round_of_slices(
    server: EmbeddedTarget, seconds: int, slice_s: int, rng: random.Random
) -> dict[str, float]:
    for side in SIDES:
        fresh(server, side)
    checkpoint(server)
    done: dict[str, list[float]] = {side: [] for side in SIDES}
    for _ in range(seconds // slice_s):
        seed = rng.randrange(1, 2**31)
        for side in rng.sample(SIDES, 2):
            done[side].append(pgbench(server, side, slice_s, seed))
    # equal seconds a slice: the side's rate is the mean of its slices' rates
    return {side: statistics.fmean(rates) for side, rates in done.items()}


def one_round(
    server: EmbeddedTarget, shape: str, seconds: int, rng: random.Random
) -> dict[str, float]:
    if shape == "runs":
        return round_of_runs(server, seconds, rng)
    return round_of_slices(server, seconds, int(shape.removeprefix("slices-")), rng)


def summary(d: list[float], walls: list[float]) -> dict[str, Any]:
    sd = statistics.stdev(d)
    mean, half = statistics.fmean(d), 2.0 * sd / math.sqrt(len(d))  # about 95% of its error
    return {
        "rounds": len(d),
        "d_sd": sd,
        "mean_d": mean,
        "mean_ratio": math.exp(mean),
        "mean_ratio_95": [math.exp(mean - half), math.exp(mean + half)],
        # the 90% half-width 10 rounds of this shape give: t(0.95, 9) = 1.833
        "half_width_10_rounds": math.expm1(1.833 * sd / math.sqrt(10)),
        "wall_s_a_round": statistics.fmean(walls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--seconds", type=int, default=10, help="measured seconds a side")
    parser.add_argument("--shapes", default="runs,slices-1,slices-2")
    parser.add_argument("--scale", type=int, default=DEFAULT_SCALE["tpcb"])
    parser.add_argument("--setting", action="append", default=[], help="NAME=VALUE")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--b-builtin", help="pgbench's builtin script for B (select-only)")
    parser.add_argument("--b-options", help="PGOPTIONS for B's sessions")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    stop_cleanly_on_signals()
    B_SIDE["builtin"] = [args.b_builtin] if args.b_builtin else []
    B_SIDE["options"] = [args.b_options] if args.b_options else []
    shapes = args.shapes.split(",")
    rng = random.Random(args.seed)
    d: dict[str, list[float]] = {shape: [] for shape in shapes}
    walls: dict[str, list[float]] = {shape: [] for shape in shapes}
    with EmbeddedTarget(find_binaries(None)) as server:
        apply_settings(server, args.setting)
        with server.connect("postgres") as conn:
            conn.execute("create database pgopt_template")
        pg = find_binaries(None).path("pgbench")
        subprocess.run(
            [str(pg), "-i", "-q", "-s", str(args.scale), dsn(server, "pgopt_template")],
            check=True,
            capture_output=True,
        )
        with server.connect("pgopt_template") as conn:
            conn.execute("vacuum analyze")
        for number in range(1, args.rounds + 1):
            for shape in rng.sample(shapes, len(shapes)):
                started = time.monotonic()
                values = one_round(server, shape, args.seconds, rng)
                walls[shape].append(time.monotonic() - started)
                d[shape].append(math.log(values["b"] / values["a"]))
                print(
                    f"round {number} {shape}: a {values['a']:.0f} b {values['b']:.0f} "
                    f"ln(b/a) {d[shape][-1]:+.3f}",
                    file=sys.stderr,
                    flush=True,
                )
    out: dict[str, Any] = {"command": " ".join(["bench/round_shapes.py", *sys.argv[1:]])}
    out["shapes"] = {shape: summary(d[shape], walls[shape]) for shape in shapes}
    out["d"] = d
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
