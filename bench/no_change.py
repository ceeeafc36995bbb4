"""Is "no change" said when it is so, and a small change still found (issue 58)?

One lab, run `--runs` times with a new `--seed` each time, at the default effort
(`--reps auto`: looks after 4, 6, 8 and 10 rounds) on pgbench's TPC-B-like
transaction, 2 clients, scale 1:

- `a` and `a_again`: two identical steps. `no-change` (the 90% interval within
  ±3%) is the right answer; `faster` or `slower` is a false verdict;
- `sleep_50us`: the same transaction followed by `\\sleep 50 us` in each client, a
  real slow-down of the order of 5-10% at this machine's 3,000 transactions a
  second (its size is measured: the mean ratio over every run); it must be called
  `slower` against `a_again` and against `a`.

Prints the verdict counts with their exact 95% binomial intervals, the rounds each
run took, the A/A intervals' half-widths and the small change's ratios; `--slice
0` runs the same with whole runs, as pgopt ran before issue 58.

    .venv/bin/python bench/no_change.py [--runs 10] [--duration 10] [--slice 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import PGBENCH_LAB_HEAD, SMOKE, pgopt_run, stop_cleanly_on_signals
from scipy.stats import binomtest

from pgopt.model.result import LabResult, Ratio

TPCB = """\\set aid random(1, 100000)
\\set bid random(1, 1)
\\set tid random(1, 10)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
  VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
"""

LAB = """
title = "No change: two identical steps and a small slow-down"

{head}
[[steps]]
name = "a"
scripts = ["tpcb.sql"]

[[steps]]
name = "a_again"

[[steps]]
name = "sleep_50us"
scripts = ["tpcb_sleep.sql"]
"""


def write_lab(folder: Path, duration: int) -> None:
    folder.mkdir(parents=True)
    shutil.copy(SMOKE / "pgbench_tables.sql", folder)
    (folder / "tpcb.sql").write_text(TPCB)
    (folder / "tpcb_sleep.sql").write_text(TPCB + "\\sleep 50 us\n")
    (folder / "lab.toml").write_text(LAB.format(head=PGBENCH_LAB_HEAD.format(duration=duration)))


def half_width(ratio: Ratio) -> float:
    """The 90% interval's half-width on the log scale, as a share (0.02: ±2%)."""
    low, high = ratio.ci90
    return math.expm1((math.log(high) - math.log(low)) / 2)


def rate_line(label: str, hits: int, total: int) -> str:
    if total == 0:
        return f"{label}: none"
    ci = binomtest(hits, total).proportion_ci(0.95)
    return f"{label}: {hits}/{total} = {hits / total:.0%} [95% {ci.low:.0%}-{ci.high:.0%}]"


def one_run(result: LabResult) -> dict[str, object]:
    steps = {s.name: s for s in result.steps}
    same, small = steps["a_again"], steps["sleep_50us"]
    assert same.ratio_vs_previous is not None and small.ratio_vs_previous is not None
    return {
        "rounds": [s.rounds for s in result.plan.segments] if result.plan else [],
        "aa": str(same.verdict_vs_previous),
        "aa_ratio": same.ratio_vs_previous.median,
        "aa_half_width": half_width(same.ratio_vs_previous),
        "small": [str(small.verdict_vs_previous), str(small.verdict_vs_baseline)],
        "small_ratio": small.ratio_vs_previous.median,
        "minutes": round(result.duration_s / 60, 2),
    }


def main() -> None:
    stop_cleanly_on_signals()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--slice", type=int, default=1, help="pgopt's --slice (0: whole runs)")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="pgopt-no-change-")) / "lab"
    write_lab(folder, args.duration)
    runs = []
    started = time.monotonic()
    try:
        for seed in range(args.first_seed, args.first_seed + args.runs):
            result = pgopt_run([str(folder), "--seed", str(seed), "--slice", str(args.slice)])
            runs.append(one_run(result))
            print(f"seed {seed}: {json.dumps(runs[-1])}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
    aa = Counter(str(r["aa"]) for r in runs)
    small = Counter(v for r in runs for v in r["small"])  # type: ignore[attr-defined]
    summary = {
        "command": "bench/no_change.py " + " ".join(sys.argv[1:]),
        "runs": len(runs),
        "aa_verdicts": dict(aa),
        "small_change_verdicts": dict(small),
        "small_change_mean_ratio": statistics.geometric_mean(
            [float(r["small_ratio"]) for r in runs]  # type: ignore[arg-type]
        ),
        "aa_median_half_width": statistics.median(
            [float(r["aa_half_width"]) for r in runs]  # type: ignore[arg-type]
        ),
        "minutes": round((time.monotonic() - started) / 60, 1),
        "each": runs,
    }
    print(rate_line("A/A called no-change", aa["no-change"], len(runs)))
    print(rate_line("A/A called faster or slower", aa["faster"] + aa["slower"], len(runs)))
    print(rate_line("small change called slower", small["slower"], sum(small.values())))
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
