"""Rounds on a real server: sequential looks stop when decided; only the first
round's pgbench runs are detailed; a disturbed round runs again once, and a
workload disturbed by nature stops the re-runs."""

from pathlib import Path

from pgopt.cli import main
from pgopt.store import load_document

from .test_lab_run import LAB, run_lab, write_lab


def test_sequential_looks_stop_at_the_first_look_when_the_change_is_clear(
    tmp_path: Path, workdir: Path
) -> None:
    lab = write_lab(tmp_path / "clear")
    out = tmp_path / "out"
    args = ["--steps", "async_commit", "--reps", "auto", "--duration", "2"]
    result = run_lab(lab, out, workdir, *args)
    # baseline and async_commit: ~2x on a commit-bound script, decided at the first look
    segment = result["plan"]["segments"][0]
    assert segment["planned_rounds"] == 10
    assert segment["rounds"] == 4, segment
    assert segment["stopped"] == "every comparison decided"
    assert [s["name"] for s in result["steps"]] == ["baseline", "async_commit"]
    assert result["steps"][1]["verdict_vs_previous"] == "faster"
    assert result["verdicts"]["alpha"] == 0.018 and result["verdicts"]["looks"] == [4, 6, 8, 10]


def test_only_the_first_rounds_runs_are_detailed(tmp_path: Path, workdir: Path) -> None:
    lab = write_lab(tmp_path / "detail")
    out = tmp_path / "out"
    args = ["--steps", "async_commit", "--reps", "2", "--duration", "2"]
    result = run_lab(lab, out, workdir, *args)
    assert result["params"]["latencies"] == "first"
    for step in result["steps"]:
        first, second = step["runs"]
        assert first["detailed"] is True and second["detailed"] is False
        # the detailed run: its log's seconds, its sampling rate, its statements
        assert [t for t, _ in first["progress"]] == [1.0, 2.0]
        assert 0 < first["log_sampling_rate"] <= 1 and first["statements"]
        # the quiet run: pgbench as a user would run it by hand
        assert not second.get("progress") and not second.get("statements")
        assert "log_sampling_rate" not in second
        assert second["tps"] == second["tps_whole_run"] > 0
        assert step["latency_ms"]["p95"] > 0  # percentiles from the detailed run
        raws = [(out / "raw" / f"{step['name']}-s1r{n}.pgbench.txt").read_text() for n in (1, 2)]
        assert "--log" in raws[0] and "--report-per-command" in raws[0]
        assert "--log" not in raws[1] and "--report-per-command" not in raws[1]
        # the warm-up second ran before, in a pgbench of its own
        assert all("duration: 2 s" in raw for raw in raws)


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
    assert "stalled:" in result["reruns"][0]["reason"]
    assert "below half the run's median second" in result["reruns"][0]["reason"]
    assert {r["runs"][0]["round"] for r in result["reruns"]} == {1}
    stalled = next(s for s in result["steps"] if s["name"] == "stalled")
    assert [r["round"] for r in stalled["runs"]] == [1, 2]
    assert all("contamination" in r for r in stalled["runs"])
    assert any("disturbed" in w for w in stalled["warnings"])
    baseline = result["steps"][0]
    assert len(baseline["runs"]) == 2  # its round-1 run was replaced, not added
    assert (out / "raw" / "stalled-s1r1-again.pgbench.txt").exists()
