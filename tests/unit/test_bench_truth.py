"""bench/truth_goal.py: how far pgopt's ratio is from the application's own, the
measure bench/replay_truth.py reports per case, and the goal it reports (pure)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from bench.truth_goal import agreement, goal_lines, goal_rows


@pytest.mark.parametrize(
    ("application", "pgopt", "within", "overlap"),
    [
        # issue 56's idle source: the application x1.24, pgopt x2.73
        ((1.24, (0.68, 2.26)), (2.73, (2.06, 3.63)), False, True),
        # its busy source, synchronous_commit off: both about x1.4
        ((1.45, (1.31, 1.61)), (1.41, (1.22, 1.62)), True, True),
        # its write-heavy case: the direction right, the size 14% low, apart
        ((2.27, (2.09, 2.46)), (1.95, (1.72, 2.05)), False, False),
    ],
)
def test_distance_within_and_overlap(
    application: tuple[float, tuple[float, float]],
    pgopt: tuple[float, tuple[float, float]],
    within: bool,
    overlap: bool,
) -> None:
    a = {"ratio": application[0], "ci95": list(application[1])}
    p = {"ratio": pgopt[0], "ci95": list(pgopt[1])}
    found = agreement(a, p)
    assert found["distance"] == round(abs(math.log(pgopt[0] / application[0])), 3)
    assert (found["within"], found["overlap"]) == (within, overlap)


def _judged(ratio: float, low: float, high: float, verdict: str) -> dict[str, Any]:
    return {"ratio": ratio, "ci95": [low, high], "verdict": verdict}


def _pgopt(told: dict[str, Any], ratio: float, low: float, high: float, fidelity: str) -> Any:
    r = {**_judged(ratio, low, high, "faster"), "fidelity": fidelity}
    return r | agreement(told, r)


def test_the_goal_counts_the_rows_the_application_decides_and_the_misses_pgopt_flagged() -> None:
    # the fifth session's table: oltp_read_write watched (hot keys unseen) and captured,
    # and this session's first capture, where sysbench's own A/B did not decide
    busy = _judged(2.14, 1.80, 2.55, "faster")
    undecided = _judged(1.21, 0.92, 1.60, "inconclusive")
    cases = [
        {
            "case": "sync_rw",
            "truth": busy,
            "watch": _pgopt(busy, 1.45, 1.30, 1.62, "unfaithful"),
            "log": _pgopt(busy, 1.60, 1.41, 1.82, "partial"),
            "capture": _pgopt(busy, 2.11, 1.69, 2.65, "faithful"),
        },
        {
            "case": "sync_rw again",
            "truth": undecided,
            "capture": _pgopt(undecided, 1.18, 1.02, 1.37, "faithful"),
        },
        {"case": "shop", "truth": busy, "watch": {"error": "pgopt: error: no statements"}},
        {
            "case": "shop_index",  # the sixth session's: the database's ratio is not the shop's
            "truth": (shop := _judged(1.61, 1.45, 1.78, "faster")),
            "watch": _pgopt(shop, 6.28, 5.19, 7.61, "faithful") | {"shared_cpu_estimate": 1.77},
        },
    ]
    with_interval = {"shared_cpu_estimate": 1.72, "shared_cpu_ci95": [1.60, 1.85]}
    rows = goal_rows(cases)
    assert [(r["case"], r["way"], r["decided"], r["met"]) for r in rows] == [
        ("sync_rw", "watch", True, False),  # 0.39 apart
        ("sync_rw", "log", True, False),  # 0.29 apart
        ("sync_rw", "capture", True, True),  # 0.01 apart, overlapping
        ("sync_rw again", "capture", False, True),
        ("shop", "watch", True, False),  # a run that failed is a miss
        ("shop_index", "watch", True, False),
    ]
    assert rows[-1]["estimate_distance"] == pytest.approx(math.log(1.77 / 1.61))
    lines = goal_lines(cases)
    assert lines[2].endswith("| 0.39 |  | unfaithful | missed |"), lines[2]
    assert lines[3].endswith("| 0.29 |  | partial | missed |"), lines[3]
    assert lines[5].endswith("| not decided by the application |"), lines[5]
    assert "| error |" in lines[6]
    assert lines[7].endswith("| 1.36 | ×1.77 (0.09) | faithful | missed |"), lines[7]
    assert lines[-2:] == [
        "The goal (within 15%, intervals overlapping, where the application decides): "
        "1 of 5 rows met; of the 4 missed, 2 pgopt itself did not call faithful; "
        "1 not decided by the application.",
        "pgopt's estimate for an application whose own work is CPU on the database's "
        "cores: within 15% on 1 of 1 decided rows (a point, no interval).",
    ]
    # this session's shop_index: the estimate x1.72 with its rounds' interval, against
    # the shop's x1.57 [1.45-1.69]; and one whose interval misses the shop's
    shop = _judged(1.57, 1.45, 1.69, "faster")
    cases = [
        {"case": "shop_index", "truth": shop, "watch": _pgopt(shop, 4.51, 4.01, 5.06, "faithful")},
        {"case": "apart", "truth": shop, "watch": _pgopt(shop, 4.51, 4.01, 5.06, "faithful")},
    ]
    cases[0]["watch"] |= with_interval
    cases[1]["watch"] |= {"shared_cpu_estimate": 1.80, "shared_cpu_ci95": [1.75, 1.85]}
    rows = goal_rows(cases)
    assert [r["estimate_overlap"] for r in rows] == [True, False]
    lines = goal_lines(cases)
    assert "| ×1.72 [1.60–1.85] (0.09) | faithful | missed |" in lines[2], lines[2]
    assert lines[-1] == (
        "pgopt's estimate for an application whose own work is CPU on the database's "
        "cores: within 15% on 2 of 2 decided rows; of the 2 with an interval, 1 within "
        "and overlapping."
    )
