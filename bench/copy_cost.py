"""What pgopt's physical copy costs a busy source (`pgopt ab --source-dsn`, issue 73): a
pgbench TPC-B-like load on one throwaway PostgreSQL, its throughput during a copy
(pgopt's own pg_basebackup run, servers/physical_copy.py) against the same seconds
just before it in the same pgbench run, the arms in a random order each round: no
copy (the control: two windows of nothing), pgopt's default (a spread checkpoint,
at most 50 MiB/s), the default rate after a fast checkpoint, unthrottled after a
spread one, and unthrottled after a fast one (pgopt's copy before issue 73).
pgbench prints its rate every second (`-P 1`, the same in every arm); a window's
rate is the mean of the seconds inside it (the copy's: the checkpoint's wait and
the read, each also on its own), and each arm's rounds are judged by pgopt's
paired rule, the window during the copy against the one before it (the machine is
shared and the load drifts as its tables grow: seconds apart, not minutes).

The copy is written to this machine's disk, and pg_basebackup and the walsender run
on its two cores beside the load: a remote copy would leave the source its CPU and
its disk's writes, so the unthrottled figure here is a worst case. The source's
checkpoint_timeout is cut to 30 s (--checkpoint-timeout) so that a spread
checkpoint ends within a bench: its wait scales with the setting (up to
checkpoint_timeout x checkpoint_completion_target, 4.5 min at the defaults, about
twice that when one is under way as pg_basebackup asks; under a write load the
source is checkpointing nearly all the time).

    .venv/bin/python bench/copy_cost.py [--rounds 3] [--scale 50] [--clients 2]

2026-12-02, this 2-core machine shared with other work (load average 2-7), scale
50 (a cluster of 814 MB), each arm's rounds as (tx/s before, during):

- `--rounds 5 --arms none,default,rate_fast,max_fast --seed 74`: none (589, 804),
  (2069, 1952), (2750, 2658), (999, 598), ...: ×0.87 [0.58–1.31]; default ×1.27
  [0.83–1.95], its read alone ×1.15 [0.70–1.87], the spread checkpoint 26.9, 46.0,
  27.0, 42.3, 47.0 s, the read 16.3–17.1 s; rate_fast ×0.80 [0.71–0.90] (read 16.0–
  16.9 s); max_fast ×0.47 [0.23–0.94] (read 1.5–2.5 s).
- `--rounds 3` (seed 73): none ×1.40 [0.61–3.21]; default ×0.70 [0.28–1.76], its
  read ×0.57 [0.17–1.87], checkpoint 34.0–47.3 s; rate_fast ×1.12 [0.70–1.78];
  max_spread ×1.05 [0.71–1.55] over its window, its read of 2.0–3.1 s ×0.27 [0.03–
  2.37], checkpoint 26.8–47.5 s; max_fast ×0.49 [0.21–1.16].

The load's own rate moved by half between rounds (other work on the machine), so
only the unthrottled read's cost and rate_fast's are decided; bench/README.md has
the table.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import pgbench_tables, stop_cleanly_on_signals

from pgopt.ab.reading import DEFAULT_RATE, KIB
from pgopt.analysis.verdicts import Rule, paired, verdict
from pgopt.binaries import PgBinaries, find_binaries
from pgopt.servers import physical_copy
from pgopt.servers.embedded import EmbeddedTarget, default_workdir_base

# arm: (max rate in bytes a second or None, checkpoint) or None for no copy
ARMS: dict[str, tuple[int | None, str] | None] = {
    "none": None,
    "default": (DEFAULT_RATE, "spread"),
    "rate_fast": (DEFAULT_RATE, "fast"),
    "max_spread": (None, "spread"),
    "max_fast": (None, "fast"),
}
WARMUP_S = 3.0
BEFORE_S = 15.0  # the window before the copy
ALONE_S = 15.0  # the no-copy arm's second window: about the default's read at scale 50
# pgbench -P 1 --progress-timestamp: "progress: 1764650000.123 s, 1234.5 tps, ..."
PROGRESS = re.compile(r"progress: ([\d.]+) s, ([\d.]+) tps")


@dataclass
class Timing:
    """One copy's moments (epoch seconds): its window before, started, its checkpoint
    done, ended."""

    before: float = 0.0
    started: float = 0.0
    checkpointed: float = 0.0
    ended: float = 0.0

    def checkpoint_done(self) -> None:
        self.checkpointed = time.time()

    def copied(self, done_bytes: int, total_bytes: int) -> None:
        if not self.checkpointed:
            self.checkpointed = time.time()


@dataclass
class Arm:
    befores: list[float] = field(default_factory=list)  # tx/s in the window before
    rates: list[float] = field(default_factory=list)  # tx/s in the copy's whole window
    wait_rates: list[float] = field(default_factory=list)  # during the checkpoint's wait
    read_rates: list[float] = field(default_factory=list)  # during the copy's read
    waits: list[float] = field(default_factory=list)
    reads: list[float] = field(default_factory=list)


def mean_between(seconds: list[tuple[float, float]], start: float, end: float) -> float:
    """The mean rate of the whole seconds that ended inside (start, end]."""
    inside = [tps for at, tps in seconds if start + 1 <= at <= end]
    return statistics.fmean(inside) if inside else float("nan")


def one_arm(
    binaries: PgBinaries, dsn: str, arm: tuple[int | None, str] | None, clients: int
) -> tuple[list[tuple[float, float]], Timing]:
    pgbench = [str(binaries.path("pgbench")), "-n", "-c", str(clients), "-j", "1"]
    pgbench += ["-T", "600", "-P", "1", "--progress-timestamp", dsn]
    proc = subprocess.Popen(pgbench, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds: list[tuple[float, float]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if match := PROGRESS.search(line):
                seconds.append((float(match.group(1)), float(match.group(2))))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timing = Timing()
    into = Path(tempfile.mkdtemp(prefix="pgopt-copy-cost-", dir=default_workdir_base()))
    try:
        time.sleep(WARMUP_S)
        timing.before = time.time()
        time.sleep(BEFORE_S)
        timing.started = time.time()
        if arm is None:
            time.sleep(ALONE_S)
            timing.checkpointed = timing.started
        else:
            rate, checkpoint = arm
            shutil.rmtree(into)
            max_rate = None if rate is None else str(rate // KIB)
            physical_copy.basebackup(
                binaries, dsn, into, checkpoint=checkpoint, max_rate=max_rate, progress=timing
            )
        timing.ended = time.time()
        time.sleep(1.5)  # the last second's line
    finally:
        proc.terminate()
        proc.wait()
        reader.join(timeout=5)
        shutil.rmtree(into, ignore_errors=True)
    return seconds, timing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", type=int, default=50)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--checkpoint-timeout", default="30s")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--seed", type=int, default=73)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    stop_cleanly_on_signals()
    names = args.arms.split(",")
    binaries = find_binaries(None)
    rng = random.Random(args.seed)
    arms = {name: Arm() for name in names}
    settings = {"checkpoint_timeout": args.checkpoint_timeout}
    with EmbeddedTarget(binaries, base_settings=settings) as source:
        dsn = f"postgresql://postgres@127.0.0.1:{source.port}/pgopt_lab"
        pgbench_tables(str(binaries.path("pgbench")), dsn, args.scale)
        with source.connect("postgres") as conn:
            row = conn.execute("select sum(pg_database_size(oid)) from pg_database").fetchone()
        print(f"the source's cluster: {int(row[0]) / 1e6:,.0f} MB" if row else "")
        for number in range(1, args.rounds + 1):
            order = names[:]
            rng.shuffle(order)
            for name in order:
                seconds, t = one_arm(binaries, dsn, ARMS[name], args.clients)
                arm = arms[name]
                arm.befores.append(mean_between(seconds, t.before, t.started))
                arm.rates.append(mean_between(seconds, t.started, t.ended))
                arm.wait_rates.append(mean_between(seconds, t.started, t.checkpointed))
                arm.read_rates.append(mean_between(seconds, t.checkpointed, t.ended))
                arm.waits.append(t.checkpointed - t.started)
                arm.reads.append(t.ended - t.checkpointed)
                print(
                    f"round {number} {name}: {arm.befores[-1]:,.0f} tx/s before, "
                    f"{arm.rates[-1]:,.0f} tx/s over "
                    f"{t.ended - t.started:.1f} s (checkpoint {arm.waits[-1]:.1f} s at "
                    f"{arm.wait_rates[-1]:,.0f} tx/s, read {arm.reads[-1]:.1f} s at "
                    f"{arm.read_rates[-1]:,.0f})",
                    flush=True,
                )
    summary = {}
    for name, arm in arms.items():
        e = paired(arm.befores, arm.rates)
        said = verdict(e, higher_is_better=True, rule=Rule())
        line = (
            f"{name}: during/before ×{e.ratio:.3f} [{e.ci95[0]:.3f}–{e.ci95[1]:.3f}] {said}; "
            f"checkpoint {min(arm.waits):.1f}-{max(arm.waits):.1f} s, read "
            f"{min(arm.reads):.1f}-{max(arm.reads):.1f} s"
        )
        for part, rates in (("checkpoint", arm.wait_rates), ("read", arm.read_rates)):
            if all(r == r for r in rates):  # a wait too short for a whole second: nan
                line += f"; during the {part} ×{paired(arm.befores, rates).ratio:.3f}"
        print(line)
        summary[name] = arm.__dict__
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
