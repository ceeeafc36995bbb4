"""Harness cost: what measuring with pgopt costs the workload it measures.

One throwaway server; pgbench's TPC-B-like script (`--workload tpcb`, the server
busy) or select-only (`--workload select`, the client busy), 2 clients, 2 threads,
at `--scale` 10 and 2 by default (common.DEFAULT_SCALE says why). Each round runs
every arm once, in an order drawn at random per round, each in the order of events
pgopt follows over `--dsn`: a database made for the run (pgopt's `pgopt_lab`), the
pgbench tables made in it, a CHECKPOINT (pgopt's settle()), a 1-s pgbench warm-up,
the run, the database dropped. So no arm meets another's leftover dirty pages or
autovacuum work, every arm's first change to each page after its CHECKPOINT logs a
full-page image, and the autovacuum launcher, which visits a database it has never
processed at its next wake-up (every 15 s here: autovacuum_naptime over the
server's 4 databases), visits every arm's database alike: in 15-s TPC-B-like runs
it vacuumed pgbench_accounts during nearly every run in a new database and in few
runs in one that outlived them (`existing_database`):

- `plain`: pgbench alone, no progress, no log, no per-statement report;
- `pgopt_flags`: + `-r -l --sampling-rate`, the flags pgopt runs pgbench with
  (per-statement latencies; the transaction sample for percentiles and for the
  per-second series);
- `progress`: + `-P 1` (what pgopt read every second before issue 23);
- `report`: + `-P 1 -r`;
- `log`: + `-P 1 -r -l --sampling-rate` (pgopt's flags before issue 23);
- `log_only`, `report_only`, `progress_10`: `-l --sampling-rate` alone, `-r` alone,
  `-P 10` (which part costs, and whether it is the reports or the timing);
- `log_sparse`: `-l` sampled to about SPARSE_LINES_PER_S lines a second, whatever the
  rate (whether the log costs per transaction or per line written);
- `unsettled`: plain pgbench without the CHECKPOINT before its warm-up (what the
  CHECKPOINT changes);
- `existing_database`: plain pgbench in one database that outlives the runs (its
  tables made afresh for TPC-B-like; select-only's serve every run): what a
  database made for the run changes;
- `argv_as_pgopt`: plain pgbench with its command line and environment as pgopt
  writes them (`--protocol simple`, `-b script@1`, `--define scale_factor=N`,
  PGAPPNAME=pgopt), pgopt's process absent;
- `one_branch`: `--define scale=1`, what pgopt passed before issue 23 whatever the
  dataset: pgbench's TPC-B-like script then updates branch 1 only;
- `pgopt`: `pgopt lab run` as it runs every round after the first: a quiet
  pgbench (`--latencies none`), the wait sampler, snapshots, the monitor;
- `pgopt_no_sampler`: the same with `--no-sampler`;
- `pgopt_detailed`: `pgopt lab run --latencies all`, as it runs the first round:
  pgbench with `-r -l`, for the latency percentiles and the per-second series.

Every arm's figure is pgbench's own tps for its whole run, and every arm is compared
with `plain` in the same round (paired t on the log ratios, as pgopt compares
steps). A round in which any run, whatever its arm, fell below 75% of the median of
all kept runs (this VM has episodes of 15-30 s in which everything runs 40% slower)
runs once more, as pgopt re-runs a stalled round whatever its steps; the first
attempt is kept in the output with the arm that fell lowest, so a cost of pgopt's
own that such a rule would hide shows there. `--setting NAME=VALUE` applies to the
server for every arm (`synchronous_commit=off` takes the virtual disk's fsync, which
varies 4x from run to run, out of a question about 2%). The question "is pgopt/plain
above 0.98?" is looked at after 8, 16, 32, ... rounds and after `--max-rounds`, each
look at 0.05 / (number of looks) so that looking often does not make a chance
difference a decision (Bonferroni), or with `--one-look` once, after `--max-rounds`, at
0.05: no early stop, and the narrowest interval those rounds give (for a count chosen
beforehand from a round's noise, e.g. ((1.96 + 0.84) x SD / margin)^2 rounds for 80%
power); the output says how many rounds it took, each
part's cost, and what pgopt's own parts used of the CPU: its process, the sampler's
thread and the sampler's backend, and pgbench's own CPU per transaction under each
arm's flags. For every arm alike, the machine's CPU during the measured pgbench run
is read too (cpu_window.py): the server's CPU per transaction, every process's, and
the CPU every process got, so that a cost splits into CPU the workload did not get
(idle or stolen) and CPU a transaction took (harness_summary.py writes the output).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import (
    DEFAULT_SCALE,
    SCRIPTS,
    SMOKE,
    apply_settings,
    pgopt_run,
    server_dsn,
    stop_cleanly_on_signals,
)
from cpu_window import WindowWatcher
from harness_summary import GOAL, Measured, harness_summary, interval

from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, PgBinaries, find_binaries
from pgopt.engine.plan import draw_rounds
from pgopt.psql import Psql
from pgopt.servers.embedded import EmbeddedTarget

FLAGS = {
    "plain": [],
    "pgopt_flags": ["-r", "-l"],
    "progress": ["-P", "1"],
    "report": ["-P", "1", "-r"],
    "log": ["-P", "1", "-r", "-l"],
    "log_only": ["-l"],
    "log_sparse": ["-l"],
    "report_only": ["-r"],
    "progress_10": ["-P", "10"],
    "one_branch": ["--define", "scale=1"],
    "unsettled": [],
    "existing_database": [],
    "argv_as_pgopt": ["--protocol", "simple"],
}
ARMS = (*FLAGS, "pgopt_no_sampler", "pgopt_detailed", "pgopt")
CPU_FIELDS = ("ru_utime", "ru_stime")
PGBENCH_TABLES = ("pgbench_history", "pgbench_tellers", "pgbench_accounts", "pgbench_branches")
FAMILY_ALPHA = 0.05
FIRST_LOOK = 8
WARMUP_S = 1
SPARSE_LINES_PER_S = 200
ACCOUNTS_VACUUMED = re.compile(r'automatic (aggressive )?vacuum of table "[^"]*\.pgbench_accounts"')
DISTURBED = 0.75  # a run this far below the median of all kept runs marks its round
RERUN_AFTER = 4  # kept rounds before the rule applies (a median needs some runs)

LAB = """
title = "harness cost: one step"
[dataset]
variable = "scale_factor"
size = {scale}
min = 1
setup = ["pgbench_tables.sql"]
[run]
clients = 2
warmup = {warmup}
[[steps]]
name = "only"
scripts = [{{ builtin = "{script}" }}]
"""


def looks(max_rounds: int, *, one_look: bool = False) -> tuple[int, ...]:
    """8, 16, 32, ... below `max_rounds`, and `max_rounds` itself (only that one)."""
    out, n = [], max_rounds if one_look else FIRST_LOOK
    while n < max_rounds:
        out.append(n)
        n *= 2
    return (*out, max_rounds)


def bench_lab(script: str, scale: int) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="pgopt-harness-")) / "harness"
    folder.mkdir()
    shutil.copy(SMOKE / "pgbench_tables.sql", folder)
    text = LAB.format(warmup=WARMUP_S, script=script, scale=scale)
    (folder / "lab.toml").write_text(text)
    return folder


class Bench:
    def __init__(self, server: EmbeddedTarget, binaries: PgBinaries, args: argparse.Namespace):
        self.server, self.binaries, self.args = server, binaries, args
        self.script = SCRIPTS[args.workload]
        self.lab = bench_lab(self.script, args.scale)
        self.env = {**server.client_env(), "PGDATABASE": "existing"}
        self.sampling_rate = 0.05  # until a run's rate says how sparse pgopt would log
        self.sparse_rate = 0.01
        self.tables_made = False
        self.observer: list[dict[str, Any]] = []

    def run(self, arm: str, seed: int) -> Measured:
        log_from = self.server.log_file.stat().st_size
        with WindowWatcher(self.args.duration, self.server.server_cpu_s) as watcher:
            if arm.startswith("pgopt"):  # pgopt makes its tables, then a CHECKPOINT
                tps, transactions, client_s = self._pgopt(arm, seed)
            else:
                tps, transactions, client_s = self._pgbench(arm, seed)
        vacuumed = self._accounts_vacuumed(log_from)
        per_tx = client_s / transactions * 1e6
        return Measured(tps, transactions, per_tx, watcher.window, vacuumed)

    def _accounts_vacuumed(self, log_from: int) -> bool:
        """Whether autovacuum vacuumed pgbench_accounts during the arm (the server logs
        every autovacuum: log_autovacuum_min_duration = 0)."""
        with open(self.server.log_file, errors="replace") as log:
            log.seek(log_from)
            return ACCOUNTS_VACUUMED.search(log.read()) is not None

    def _pgbench(self, arm: str, seed: int) -> tuple[float, int, float]:
        """Plain pgbench with `arm`'s flags: its tps, transactions and CPU seconds."""
        psql = Psql(self.binaries, self.env)
        fresh_database = arm != "existing_database"
        if fresh_database:
            psql.run("create database fresh", {}, what="create")  # as pgopt's pgopt_lab
        env = {**self.env, "PGDATABASE": "fresh"} if fresh_database else self.env
        script = self.script
        if arm == "argv_as_pgopt":  # pgbench's command line and environment as pgopt's
            env, script = {**env, "PGAPPNAME": "pgopt"}, f"{script}@1"
        in_database = Psql(self.binaries, env)
        # select-only's tables serve every run
        fresh_tables = self.script != "select-only" or fresh_database
        if fresh_tables or not self.tables_made:
            scale = {"scale_factor": str(self.args.scale)}
            in_database.run_file(self.lab / "pgbench_tables.sql", scale, what="setup")
            self.tables_made = self.tables_made or not fresh_database  # the existing's
        if arm != "unsettled":  # as pgopt's settle(): the tables' pages written out
            psql.run("checkpoint", {}, what="checkpoint")
        rate = self.sparse_rate if arm == "log_sparse" else self.sampling_rate
        extra = FLAGS[arm] + ([f"--sampling-rate={rate:.4g}"] if "-l" in FLAGS[arm] else [])
        if arm == "argv_as_pgopt":
            extra += ["--define", f"scale_factor={self.args.scale}"]
        args = [str(self.binaries.path("pgbench")), "-n", "-b", script, "-c", "2", "-j", "2"]
        warmup = [*args, "-T", str(WARMUP_S), f"--random-seed={seed + 1}"]
        subprocess.run(warmup, env=env, capture_output=True, check=True)
        args += ["-T", str(self.args.duration), f"--random-seed={seed}", *extra]
        log_dir = Path(tempfile.mkdtemp(prefix="pgopt-harness-log-"))
        client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.run(args, env=env, capture_output=True, text=True, cwd=log_dir)
        finally:
            shutil.rmtree(log_dir, ignore_errors=True)
        client_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if fresh_database:
            psql.run("drop database fresh", {}, what="drop")
        elif fresh_tables:
            psql.run(f"drop table {', '.join(PGBENCH_TABLES)}", {}, what="drop")
        if proc.returncode != 0:
            raise SystemExit(f"pgbench failed: {proc.stderr}")
        tps = re.search(r"tps = ([0-9.]+)", proc.stdout)
        count = re.search(r"actually processed: (\d+)", proc.stdout)
        assert tps is not None and count is not None
        client = sum(getattr(client_after, f) - getattr(client_before, f) for f in CPU_FIELDS)
        if arm == "plain":
            self._log_as_pgopt(float(tps.group(1)))
        return float(tps.group(1)), int(count.group(1)), client

    def _log_as_pgopt(self, tps: float) -> None:
        """The log arm samples as pgopt would: about 20,000 transactions a run."""
        self.sampling_rate = min(1.0, 20_000 / (tps * self.args.duration))
        self.sparse_rate = min(1.0, SPARSE_LINES_PER_S / tps)

    def _pgopt(self, arm: str, seed: int) -> tuple[float, int, float]:
        args = [str(self.lab), "--dsn", server_dsn(self.server), "--allow-settings", "--reps", "1"]
        args += ["--duration", str(self.args.duration), "--seed", str(seed)]
        args += ["--latencies", "all" if arm == "pgopt_detailed" else "none"]
        if arm == "pgopt_no_sampler":
            args.append("--no-sampler")
        result = pgopt_run(args)
        run = result.steps[0].runs[0]
        assert run.tps_whole_run is not None and run.observer is not None
        assert run.transactions and run.client_cpu_s is not None
        if arm == "pgopt":
            self.observer.append(run.observer)
        return run.tps_whole_run, run.transactions, run.client_cpu_s


def main() -> None:
    stop_cleanly_on_signals()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workload", choices=sorted(SCRIPTS), default="tpcb")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--scale", type=int, help="10 for tpcb, 2 for select")
    parser.add_argument("--max-rounds", type=int, default=64)
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="server setting for every arm (e.g. synchronous_commit=off: no fsync noise)",
    )
    parser.add_argument("--one-look", action="store_true", help="decide after --max-rounds only")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.scale = args.scale or DEFAULT_SCALE[args.workload]
    arms = tuple(a for a in args.arms.split(",") if a)
    if "plain" not in arms or not set(arms) <= set(ARMS):
        raise SystemExit(f"--arms: plain, and any of {', '.join(ARMS)}")
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    runs: dict[str, list[Measured]] = {arm: [] for arm in arms}
    orders: list[list[str]] = []
    disturbed: list[dict[str, Any]] = []
    planned_looks = looks(args.max_rounds, one_look=args.one_look)
    level = 1 - FAMILY_ALPHA / len(planned_looks)
    with EmbeddedTarget(binaries) as server:
        with server.connect("postgres") as conn:
            conn.execute("create database existing")
        apply_settings(server, ["log_autovacuum_min_duration=0", *args.setting])
        bench = Bench(server, binaries, args)
        try:
            decision = _run_rounds(bench, arms, runs, (orders, disturbed), (planned_looks, level))
        finally:
            shutil.rmtree(bench.lab.parent, ignore_errors=True)
    looked = (planned_looks, level, decision)
    summary = harness_summary(args, runs, (orders, disturbed), bench.observer, looked)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


def _disturbed(round_tps: dict[str, float], kept: dict[str, list[Measured]]) -> bool:
    """Label-blind, as pgopt re-runs a stalled round whatever its steps: once
    RERUN_AFTER rounds are kept, a round in which any run, whatever its arm, fell below
    DISTURBED x the median of every kept run is disturbed."""
    pooled = [m.tps for measured in kept.values() for m in measured]
    if len(kept["plain"]) < RERUN_AFTER:
        return False
    return min(round_tps.values()) < DISTURBED * statistics.median(pooled)


def _run_rounds(
    bench: Bench,
    arms: tuple[str, ...],
    runs: dict[str, list[Measured]],
    record: tuple[list[list[str]], list[dict[str, Any]]],
    looking: tuple[tuple[int, ...], float],
) -> str:
    """Run rounds into `runs` until a look (after the rounds in `looking`, at its
    level) decides pgopt/plain against GOAL, or the last look has passed; "above",
    "below" or "undecided". A disturbed round (`_disturbed`) runs once more, its
    first runs kept aside in `record`; the second attempt counts, whatever it gives."""
    orders, disturbed = record
    planned_looks, level = looking
    for planned in draw_rounds(bench.args.seed, 0, arms, planned_looks[-1]):
        orders.append(list(planned.order))
        for attempt in (1, 2):
            measured = {arm: bench.run(arm, planned.pgbench_seed) for arm in planned.order}
            line = " ".join(f"{a}={measured[a].tps:.0f}" for a in arms)
            print(f"round {planned.number}: {line}", file=sys.stderr)
            tps = {a: m.tps for a, m in measured.items()}
            if attempt == 2 or not _disturbed(tps, runs):
                break
            disturbed.append(
                {"round": planned.number, "tps": tps, "lowest": min(tps, key=lambda a: tps[a])}
            )
            say = f"  disturbed (a run below {DISTURBED:.0%} of the median): again"
            print(say, file=sys.stderr)
        for arm in arms:
            runs[arm].append(measured[arm])
        if "pgopt" in arms and planned.number in planned_looks:
            pair = {a: [m.tps for m in runs[a]] for a in ("plain", "pgopt")}
            low, high = interval(pair["plain"], pair["pgopt"], level)
            print(f"  look: pgopt/plain [{level:.2%}: {low:.3f}-{high:.3f}]", file=sys.stderr)
            if low > GOAL or high < GOAL:
                return "above" if low > GOAL else "below"
    return "undecided"


if __name__ == "__main__":
    main()
