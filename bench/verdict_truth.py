"""Verdict truth: how often pgopt's verdicts are wrong, and how often right, on this machine.

One lab, run `--runs` times with a new `--seed` each time, on pgbench's TPC-B-like
script (2 clients) at the default effort (`--reps auto`):

- `a1` ... `a5`: five identical steps. Every comparison among them (each against
  the step before it and against the baseline: 7 per run) has no true difference,
  so a `faster` or `slower` there is a false verdict;
- `async`: synchronous_commit = off, about 2x on a commit-bound machine: it must be
  called `faster` against a5 and against the baseline every time;
- `rate_400` and `rate_440`: the select-only script held by pgbench at 400 and 440
  transactions per second: a known +10%, to show the power at a realistic size.

Prints the counts, the rates with their exact 95% binomial intervals, and the
command; `--json FILE` keeps them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import PGBENCH_LAB_HEAD, pgopt_run, stop_cleanly_on_signals
from scipy.stats import binomtest

from pgopt.model.result import LabResult
from pgopt.model.verdict import Verdict

SMOKE = Path(__file__).resolve().parent.parent / "src/pgopt/labs/smoke"
IDENTICAL = ("a1", "a2", "a3", "a4", "a5")

LAB = """
title = "Verdict truth: five identical steps, a 2x change and a +10% rate"

{head}{steps}
"""

STEP = """
[[steps]]
name = "{name}"
{body}
"""


def lab_text(duration: int) -> str:
    steps = [STEP.format(name="a1", body='scripts = [{ builtin = "tpcb-like" }]')]
    steps += [STEP.format(name=n, body="") for n in IDENTICAL[1:]]
    steps.append(STEP.format(name="async", body='settings = { synchronous_commit = "off" }'))
    rate = (
        '\nfrom = "a1"\nscripts = [{{ builtin = "select-only" }}]\npgbench_args = ["--rate", "{}"]'
    )
    steps.append(STEP.format(name="rate_400", body=rate.format(400)))
    steps.append(STEP.format(name="rate_440", body='pgbench_args = ["--rate", "440"]'))
    return LAB.format(head=PGBENCH_LAB_HEAD.format(duration=duration), steps="".join(steps))


def comparisons(result: LabResult) -> list[tuple[str, str, str]]:
    """(B, A, verdict) for every comparison the run made."""
    out = []
    for step in result.steps:
        if step.compared_with is not None and step.verdict_vs_previous != Verdict.NOT_APPLICABLE:
            out.append((step.name, step.compared_with, str(step.verdict_vs_previous)))
        if step.verdict_vs_baseline != Verdict.NOT_APPLICABLE and step.compared_with != "a1":
            out.append((step.name, "a1", str(step.verdict_vs_baseline)))
    return out


def rate_line(label: str, hits: int, total: int) -> str:
    if total == 0:
        return f"{label}: none"
    ci = binomtest(hits, total).proportion_ci(0.95)
    return f"{label}: {hits}/{total} = {hits / total:.1%} [95% {ci.low:.1%}-{ci.high:.1%}]"


def main() -> None:
    stop_cleanly_on_signals()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="pgopt-verdict-truth-")) / "truth"
    folder.mkdir()
    shutil.copy(SMOKE / "pgbench_tables.sql", folder)
    (folder / "lab.toml").write_text(lab_text(args.duration))
    null: Counter[str] = Counter()
    effect: Counter[str] = Counter()
    ten: Counter[str] = Counter()
    rounds: list[int] = []
    started = time.monotonic()
    for seed in range(1, args.runs + 1):
        result = pgopt_run([str(folder), "--seed", str(seed)])
        rounds += [s.rounds for s in result.plan.segments] if result.plan else []
        for b, a, verdict in comparisons(result):
            if b in IDENTICAL and a in IDENTICAL:
                null[verdict] += 1
            elif b == "async":
                effect[verdict] += 1
            elif b == "rate_440" and a == "rate_400":
                ten[verdict] += 1
        print(f"run {seed}: {dict(null)} {dict(effect)} {dict(ten)}", file=sys.stderr)
    shutil.rmtree(folder.parent, ignore_errors=True)
    wrong = null["faster"] + null["slower"]
    summary = {
        "command": "bench/verdict_truth.py " + " ".join(sys.argv[1:]),
        "runs": args.runs,
        "rounds_per_run": rounds,
        "identical": dict(null),
        "two_x": dict(effect),
        "plus_10_percent": dict(ten),
        "minutes": round((time.monotonic() - started) / 60, 1),
    }
    print(rate_line("false verdicts (identical steps)", wrong, sum(null.values())))
    print(rate_line("2x change called faster", effect["faster"], sum(effect.values())))
    print(rate_line("+10% rate called faster", ten["faster"], sum(ten.values())))
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    shutil.rmtree(folder.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
