"""The queue lab: every consumer pattern processes each order exactly once."""

from pathlib import Path

import pytest

from pgopt.cli import main
from pgopt.store import load_document


def test_queue_patterns_are_exactly_once(tmp_path: Path, workdir: Path) -> None:
    out = tmp_path / "queue"
    code = main(
        [
            "lab",
            "run",
            "queue",
            "--quick",
            "--reps",
            "1",
            "--duration",
            "1",
            "--clients",
            "16",
            "--steps",
            "skip_locked,advisory_lock,sharded,batch10",
            "--workdir",
            str(workdir),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    result = load_document(out)
    steps = {s["name"]: s for s in result["steps"]}
    assert list(steps) == ["baseline", "skip_locked", "advisory_lock", "sharded", "batch10"]
    for step in steps.values():
        names = {c["name"]: c["passed"] for c in step["checks"]}
        assert names["every order is queued or processed: none lost"], step["name"]
        assert names["no order processed twice"], step["name"]
        assert step["metric"]["median"] > 0
        assert set(step["waits"]) and abs(sum(step["waits"].values()) - 1) < 0.01
    # FOR UPDATE makes consumers wait on each other's row locks: the sampler sees it
    assert any(w.startswith("Lock:") for w in steps["baseline"]["waits"])
    assert steps["sharded"]["changes"]["schema"] == ["shard.sql"]
    assert steps["batch10"]["changes"]["variables"] == {"batch": "10"}


def test_steady_state_runs_producers_and_monitors_the_queue(tmp_path: Path, workdir: Path) -> None:
    out = tmp_path / "steady"
    code = main(
        [
            "lab",
            "run",
            "queue",
            "--quick",
            "--reps",
            "1",
            "--duration",
            "3",
            "--steps",
            "steady",
            "--workdir",
            str(workdir),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    result = load_document(out)
    steady = result["steps"][-1]
    assert steady["name"] == "steady"
    run = steady["runs"][0]
    assert run["background"]["transactions"] > 0 and run["background"]["failed"] == 0
    depth = run["monitor"]["queue_depth"]
    assert len(depth) >= 3 and depth[0][0] < 1.0 < depth[-1][0]
    assert all(c["passed"] for c in steady["checks"])
    # every order the producers brought is either processed or still queued
    facts = steady["facts"]
    produced, left = int(facts["produced"]), int(facts["left_queued"])
    assert produced == run["background"]["transactions"]
    assert 0 <= left <= produced + 1000  # the backlog of 1,000 it started with
    assert steady["fact_units"] == {"wait_p50": "ms", "wait_p95": "ms"}
    assert 0 <= float(facts["wait_p50"]) <= float(facts["wait_p95"])


@pytest.mark.serial
def test_the_set_based_ceiling_and_the_best_consumers_share_of_it(
    tmp_path: Path, workdir: Path
) -> None:
    out = tmp_path / "ceiling"
    args = ["lab", "run", "queue", "--quick", "--reps", "2", "--duration", "2"]
    args += ["--steps", "batch1000,set_based", "--workdir", str(workdir)]
    assert main([*args, "--out", str(out)]) == 0
    result = load_document(out)
    steps = {s["name"]: s for s in result["steps"]}
    ceiling = steps["set_based"]
    assert ceiling["clients"] == 1 and all(r["transactions"] == 1 for r in ceiling["runs"])
    assert all(c["passed"] for s in steps.values() for c in s["checks"])
    assert steps["batch1000"]["changes"]["variables"] == {"batch": "1000"}
    share = result["ceiling"]
    assert share["step"] == "set_based" and share["rounds"] == 2
    best = max(("baseline", "batch1000"), key=lambda n: steps[n]["metric"]["median"])
    assert share["best"] == best
    assert share["share"] == pytest.approx(
        steps[best]["metric"]["median"] / ceiling["metric"]["median"], rel=0.2
    )
    assert 0 < share["share"] < 1  # one statement outruns every consumer
    assert "of the ceiling set_based measures" in (out / "report.md").read_text()
