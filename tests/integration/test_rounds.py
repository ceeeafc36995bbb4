"""Rounds on a real server: sequential looks stop when decided; a disturbed round
runs again once, and a workload disturbed by nature stops the re-runs (that only
the first round's runs are detailed: test_lab_run.py)."""

from pathlib import Path

import pytest

from pgopt.cli import main
from pgopt.store import load_document

from .test_lab_run import LAB, run_lab, write_lab


@pytest.mark.serial
def test_sequential_looks_stop_at_the_first_look_when_the_change_is_clear(
    tmp_path: Path, workdir: Path
) -> None:
    # every flushed commit sleeps 10 ms: async commit is some 30x faster, which no load
    # on the machine can hide in 1-s runs, so the first look decides it
    toml = LAB.replace('commit_delay = "3000"', 'commit_delay = "10000"')
    toml = toml.replace("warmup = 1", "warmup = 0")  # the rounds are what is tested
    assert 'commit_delay = "10000"' in toml and "warmup = 0" in toml
    lab = write_lab(tmp_path / "clear", toml)
    out = tmp_path / "out"
    args = ["--steps", "async_commit", "--reps", "auto", "--duration", "1"]
    result = run_lab(lab, out, workdir, *args)
    segment = result["plan"]["segments"][0]
    assert segment["planned_rounds"] == 10
    assert segment["rounds"] == 4, segment
    assert segment["stopped"] == "every comparison decided"
    assert [s["name"] for s in result["steps"]] == ["baseline", "async_commit"]
    assert result["steps"][1]["verdict_vs_previous"] == "faster"
    assert result["verdicts"]["alpha"] == 0.018 and result["verdicts"]["looks"] == [4, 6, 8, 10]


STALL = """
[[steps]]
name = "stalled"
title = "a lock taken every few seconds stalls the inserts"
[steps.background]
scripts = ["stall.sql"]
clients = 1
"""


def test_a_disturbed_round_runs_again_once(tmp_path: Path, workdir: Path) -> None:
    toml = LAB.replace("reps = 5", "reps = 2").replace("duration = 2", "duration = 5")
    assert "duration = 5" in toml  # the stall needs runs longer than its 3.5-s cycle
    lab = write_lab(tmp_path / "stall", toml + STALL)
    # takes the table's lock from second 2 to 3.5 of every 3.5: the inserts stop
    (lab / "stall.sql").write_text(
        "select pg_sleep(2);\n"
        "begin;\nlock table log in access exclusive mode;\nselect pg_sleep(1.5);\nend;\n"
    )
    out = tmp_path / "out"
    args = ["lab", "run", str(lab), "--workdir", str(workdir), "--out", str(out)]
    assert main([*args, "--steps", "stalled", "--latencies", "all"]) == 0
    result = load_document(out)
    # round 1 was disturbed and ran again; disturbed again, it was kept and nothing
    # more was re-run: round 2 stands as it is
    assert [(r["segment"], r["round"]) for r in result["reruns"]] == [(1, 1)]
    # the reason names the round's first disturbed run: the stalled one, or another
    # that load on the machine disturbed as well; the stalled run was disturbed
    assert "below half the run's median second" in result["reruns"][0]["reason"]
    order = result["plan"]["segments"][0]["orders"][0]
    first_try = {order[r["position"] - 1]: r for r in result["reruns"][0]["runs"]}
    assert "contamination" in first_try["stalled"]
    assert {r["runs"][0]["round"] for r in result["reruns"]} == {1}
    stalled = next(s for s in result["steps"] if s["name"] == "stalled")
    assert [r["round"] for r in stalled["runs"]] == [1, 2]
    assert all("contamination" in r for r in stalled["runs"])
    assert any("disturbed" in w for w in stalled["warnings"])
    baseline = result["steps"][0]
    assert len(baseline["runs"]) == 2  # its round-1 run was replaced, not added
    assert (out / "raw" / "stalled-s1r1-again.pgbench.txt").exists()
