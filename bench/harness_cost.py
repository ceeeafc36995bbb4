"""Harness cost: what measuring with pgopt costs the workload it measures.

One throwaway server; pgbench's TPC-B-like script (`--workload tpcb`, the server
busy) or select-only (`--workload select`, the client busy), 2 clients, 2 threads.
Each round runs every arm once, in an order drawn at random per round, each on
freshly created pgbench tables after a CHECKPOINT, for the same `-T`:

- `plain`: pgbench alone, no progress, no log, no per-statement report;
- `progress`: + `-P 1` (pgopt reads it every second);
- `report`: + `-P 1 -r` (per-statement latencies);
- `log`: + `-P 1 -r -l --sampling-rate` (the transaction sample for percentiles);
- `pgopt_no_sampler`: `pgopt lab run` with `--no-sampler` (snapshots, monitor, all else);
- `pgopt`: `pgopt lab run` as users run it.

Every arm's figure is pgbench's own tps for its whole run, and every arm is compared
with `plain` in the same round by the project's rule (paired t on the log ratios).
`--setting NAME=VALUE` applies to the server for every arm (`synchronous_commit=off`
takes the virtual disk's fsync, which varies 4x from run to run, out of a question
about 2%). Rounds continue (from 4, up to `--max-rounds`) until the interval of
pgopt/plain decides against 0.98: above it (pgopt costs under 2%) or below. The output says
how many rounds that took, each part's cost, and the sampler's own CPU.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import pgopt_run, server_dsn, stop_cleanly_on_signals

from pgopt.analysis.verdicts import paired
from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, PgBinaries, find_binaries
from pgopt.engine.plan import draw_rounds
from pgopt.psql import Psql
from pgopt.target.embedded import EmbeddedTarget

SMOKE = Path(__file__).resolve().parent.parent / "src/pgopt/labs/smoke"
SCRIPTS = {"tpcb": "tpcb-like", "select": "select-only"}
ARMS = ("plain", "progress", "report", "log", "pgopt_no_sampler", "pgopt")
GOAL = 0.98
WARMUP_S = 1

LAB = """
title = "harness cost: one step"
[dataset]
variable = "scale_factor"
size = 1
min = 1
setup = ["pgbench_tables.sql"]
[run]
clients = 2
warmup = {warmup}
[[steps]]
name = "only"
scripts = [{{ builtin = "{script}" }}]
"""


def bench_lab(script: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="pgopt-harness-")) / "harness"
    folder.mkdir()
    shutil.copy(SMOKE / "pgbench_tables.sql", folder)
    (folder / "lab.toml").write_text(LAB.format(warmup=WARMUP_S, script=script))
    return folder


class Bench:
    def __init__(self, server: EmbeddedTarget, binaries: PgBinaries, args: argparse.Namespace):
        self.server, self.binaries, self.args = server, binaries, args
        self.script = SCRIPTS[args.workload]
        self.lab = bench_lab(self.script)
        self.env = {**server.client_env(), "PGDATABASE": "plain"}
        self.sampling_rate = 1.0
        self.observer: list[dict[str, Any]] = []

    def run(self, arm: str, seed: int) -> float:
        if arm.startswith("pgopt"):
            return self._pgopt(arm, seed)
        psql = Psql(self.binaries, self.env)
        psql.run_file(self.lab / "pgbench_tables.sql", {"scale_factor": "1"}, what="setup")
        psql.run("checkpoint", {}, what="checkpoint")  # as pgopt does before a run
        extra = {
            "plain": [],
            "progress": ["-P", "1"],
            "report": ["-P", "1", "-r"],
            "log": ["-P", "1", "-r", "-l", f"--sampling-rate={self.sampling_rate:.4g}"],
        }[arm]
        seconds = self.args.duration + WARMUP_S
        args = [str(self.binaries.path("pgbench")), "-n", "-b", self.script, "-c", "2", "-j", "2"]
        args += ["-T", str(seconds), f"--random-seed={seed}", *extra]
        log_dir = Path(tempfile.mkdtemp(prefix="pgopt-harness-log-"))
        proc = subprocess.run(args, env=self.env, capture_output=True, text=True, cwd=log_dir)
        shutil.rmtree(log_dir, ignore_errors=True)
        if proc.returncode != 0:
            raise SystemExit(f"pgbench failed: {proc.stderr}")
        match = re.search(r"tps = ([0-9.]+)", proc.stdout)
        assert match is not None
        return float(match.group(1))

    def _pgopt(self, arm: str, seed: int) -> float:
        args = [str(self.lab), "--dsn", server_dsn(self.server), "--allow-settings", "--reps", "1"]
        args += ["--duration", str(self.args.duration), "--seed", str(seed)]
        if arm == "pgopt_no_sampler":
            args.append("--no-sampler")
        result = pgopt_run(args)
        run = result.steps[0].runs[0]
        assert run.tps_whole_run is not None and run.observer is not None
        # the log arm samples as pgopt would: about 20,000 transactions a run
        self.sampling_rate = min(1.0, 20_000 / (run.tps_whole_run * self.args.duration))
        if arm == "pgopt":
            self.observer.append(run.observer)
        return run.tps_whole_run


def decided(ratio_low: float, ratio_high: float) -> bool:
    return ratio_low > GOAL or ratio_high < GOAL


def main() -> None:
    stop_cleanly_on_signals()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workload", choices=sorted(SCRIPTS), default="tpcb")
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--max-rounds", type=int, default=12)
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="server setting for every arm (e.g. synchronous_commit=off: no fsync noise)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    arms = tuple(a for a in args.arms.split(",") if a)
    if "plain" not in arms or "pgopt" not in arms or not set(arms) <= set(ARMS):
        raise SystemExit(f"--arms: plain and pgopt, and any of {', '.join(ARMS)}")
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    values: dict[str, list[float]] = {arm: [] for arm in arms}
    orders: list[list[str]] = []
    with EmbeddedTarget(binaries) as server:
        with server.connect("postgres") as conn:
            conn.execute("create database plain")
            for item in args.setting:
                name, _, value = item.partition("=")
                conn.execute(f"alter system set {name} = '{value}'")
            conn.execute("select pg_reload_conf()")
        bench = Bench(server, binaries, args)
        for planned in draw_rounds(args.seed, 0, arms, args.max_rounds):
            orders.append(list(planned.order))
            for arm in planned.order:
                values[arm].append(bench.run(arm, planned.pgbench_seed))
            line = " ".join(f"{a}={values[a][-1]:.0f}" for a in arms)
            print(f"round {planned.number}: {line}", file=sys.stderr)
            if planned.number >= 4:
                e = paired(values["plain"], values["pgopt"])
                if decided(*e.ci95):
                    break
    summary = _summary(args, values, orders, bench.observer)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


def _summary(
    args: argparse.Namespace,
    values: dict[str, list[float]],
    orders: list[list[str]],
    observer: list[dict[str, Any]],
) -> dict[str, Any]:
    rounds = len(values["plain"])
    out: dict[str, Any] = {
        "command": "bench/harness_cost.py " + " ".join(sys.argv[1:]),
        "workload": args.workload,
        "duration_s": args.duration,
        "settings": args.setting,
        "rounds": rounds,
        "orders": orders,
        "tps": values,
        "vs_plain": {},
    }
    for arm, samples in values.items():
        if arm == "plain":
            continue
        e = paired(values["plain"], samples)
        out["vs_plain"][arm] = {
            "ratio": round(e.ratio, 4),
            "ci95": [round(e.ci95[0], 4), round(e.ci95[1], 4)],
            "cost": f"{1 - e.ratio:+.1%}",
        }
        print(
            f"{arm}/plain: {e.ratio:.3f} [95% {e.ci95[0]:.3f}-{e.ci95[1]:.3f}], {rounds} rounds",
            file=sys.stderr,
        )
    low = out["vs_plain"]["pgopt"]["ci95"][0]
    out["goal"] = f"pgopt/plain above {GOAL}: {'met' if low > GOAL else 'not shown'}"
    if observer:
        wall = sum(o["wall_s"] for o in observer)
        sampler = sum(
            o.get("sampler_client_cpu_s", 0) + (o.get("sampler_server_cpu_s") or 0)
            for o in observer
        )
        out["sampler_core_share"] = round(sampler / wall, 4)
        pgbench_wall = sum(o["pgbench_wall_s"] for o in observer)
        out["pgopt_core_share"] = round(sum(o["pgopt_cpu_s"] for o in observer) / pgbench_wall, 4)
    return out


if __name__ == "__main__":
    main()
