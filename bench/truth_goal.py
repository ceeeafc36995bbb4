"""How far pgopt's ratio is from the application's, and the goal
bench/replay_truth.py reports at its end (pure): on every case the
application decides (its own verdict is not `inconclusive`), pgopt's point ratio
within 15% of the application's and their 95% intervals overlapping.

A row is one way pgopt read the source (watch, idle, log, capture; and copy). A
row pgopt itself did not call `faithful` (`partial`, `unfaithful`) still counts:
the goal is the ratio a user reads, and the check's reason is what tells the user
not to trust it, which the table shows beside the miss. The ratio held to the
goal is the database's; where pgopt also estimates what an application whose own
work is CPU on the database's cores gets (analysis/amdahl.py: a shop whose
requests are mostly its own Python), that estimate, with its interval from the
rounds where it has one, is held to the same goal on a line of its own."""

from __future__ import annotations

import math
from typing import Any

WITHIN = 0.15  # the goal: pgopt's point ratio within 15% of the application's


def agreement(application: dict[str, Any], pgopt: dict[str, Any]) -> dict[str, Any]:
    """How far pgopt's ratio is from the application's: |ln(pgopt / application)|,
    whether the point ratios are within WITHIN of each other, and whether their 95%
    intervals overlap."""
    distance = abs(math.log(pgopt["ratio"] / application["ratio"]))
    (a_low, a_high), (p_low, p_high) = application["ci95"], pgopt["ci95"]
    return {
        "distance": round(distance, 3),
        "within": distance <= math.log(1 + WITHIN),
        "overlap": p_low <= a_high and a_low <= p_high,
    }


def goal_rows(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case's rows, flattened: the application's ratio and verdict, pgopt's,
    their distance, and whether the row is decided and meets the goal."""
    rows = []
    for case in cases:
        told = case["truth"]
        decided = told["verdict"] != "inconclusive"
        for way, r in case.items():
            if not isinstance(r, dict) or way == "truth":
                continue
            failed = "error" in r
            estimate = r.get("shared_cpu_estimate")
            interval = r.get("shared_cpu_ci95")
            rows.append(
                {
                    "case": case["case"],
                    "way": way,
                    "application": told,
                    "pgopt": r,
                    "decided": decided,
                    "met": not failed and bool(r.get("within")) and bool(r.get("overlap")),
                    "estimate_distance": (
                        abs(math.log(estimate / told["ratio"])) if estimate else None
                    ),
                    "estimate_overlap": (
                        interval[0] <= told["ci95"][1] and told["ci95"][0] <= interval[1]
                        if estimate and interval
                        else None
                    ),
                }
            )
    return rows


def _ratio(r: dict[str, Any]) -> str:
    if "error" in r:
        return "error"
    low, high = r["ci95"]
    return f"×{r['ratio']:.2f} [{low:.2f}–{high:.2f}]"


def goal_lines(cases: list[dict[str, Any]]) -> list[str]:
    """The table of every row and the goal's line, in Markdown."""
    rows = goal_rows(cases)
    lines = [
        "| case | way | application | pgopt | distance | on these CPUs | fidelity | goal |",
        "|---|---|---|---|--:|---|---|---|",
    ]
    for row in rows:
        told, r = row["application"], row["pgopt"]
        if not row["decided"]:
            mark = "not decided by the application"
        else:
            mark = "met" if row["met"] else "missed"
        distance = f"{r['distance']:.2f}" if "distance" in r else ""
        estimate = ""
        if row["estimate_distance"] is not None:
            interval = r.get("shared_cpu_ci95")
            spread = f" [{interval[0]:.2f}–{interval[1]:.2f}]" if interval else ""
            estimate = f"×{r['shared_cpu_estimate']:.2f}{spread} ({row['estimate_distance']:.2f})"
        lines.append(
            f"| {row['case']} | {row['way']} | {_ratio(told)} {told['verdict']} | "
            f"{_ratio(r)} | {distance} | {estimate} | {r.get('fidelity') or ''} | {mark} |"
        )
    decided = [row for row in rows if row["decided"]]
    missed = [row for row in decided if not row["met"]]
    flagged = [row for row in missed if row["pgopt"].get("fidelity") in ("partial", "unfaithful")]
    lines.append("")
    lines.append(
        f"The goal (within {WITHIN:.0%}, intervals overlapping, where the application "
        f"decides): {len(decided) - len(missed)} of {len(decided)} rows met"
        + (
            f"; of the {len(missed)} missed, {len(flagged)} pgopt itself did not call faithful"
            if missed
            else ""
        )
        + (
            f"; {len(rows) - len(decided)} not decided by the application"
            if len(rows) > len(decided)
            else ""
        )
        + "."
    )
    estimated = [row for row in decided if row["estimate_distance"] is not None]
    if estimated:
        near = [row for row in estimated if row["estimate_distance"] <= math.log(1 + WITHIN)]
        spanned = [row for row in estimated if row["estimate_overlap"] is not None]
        both = [row for row in near if row["estimate_overlap"]]
        lines.append(
            f"pgopt's estimate for an application whose own work is CPU on the database's "
            f"cores: within {WITHIN:.0%} on {len(near)} of {len(estimated)} decided rows"
            + (
                f"; of the {len(spanned)} with an interval, {len(both)} within and overlapping"
                if spanned
                else " (a point, no interval)"
            )
            + "."
        )
    return lines
