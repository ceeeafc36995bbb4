"""The login lab's schema steps (seed 000's checklist): partitioned login records and
a split session table, each applied in a segment of its own, the data checked after."""

from pathlib import Path

from pgopt.cli import main
from pgopt.lab import resolve_lab
from pgopt.store import load_document

STEPS = ["mixed", "partition_range", "partition_hash", "partition_hash_1024", "split"]


def test_partitioned_and_split_tables_keep_every_login(tmp_path: Path, workdir: Path) -> None:
    out = tmp_path / "login"
    args = ["lab", "run", "login", "--quick", "--reps", "2", "--duration", "1"]
    args += ["--steps", ",".join(STEPS), "--workdir", str(workdir), "--out", str(out)]
    assert main(args) == 0
    result = load_document(out)
    steps = {s["name"]: s for s in result["steps"]}
    assert list(steps) == ["baseline", *STEPS]
    assert result["passed"] is True  # every login counted once, one session row per user
    # the schema each step asked for is the one it ran on
    partitioned = ["partition_range", "partition_hash", "partition_hash_1024"]
    assert [steps[n]["facts"]["partitions"] for n in partitioned] == ["5", "16", "1024"]
    for name in partitioned:
        facts = steps[name]["facts"]
        assert float(facts["plan_all_ms"]) > 0 and float(facts["plan_pruned_ms"]) > 0
        assert steps[name]["fact_units"] == {"plan_all_ms": "ms", "plan_pruned_ms": "ms"}
    assert steps["partition_hash_1024"]["changes"]["variables"] == {"partitions": "1024"}
    assert steps["split"]["changes"]["schema"] == ["split.sql"]
    assert steps["split"]["changes"]["scripts"] == ["login_split.sql", "logout_split.sql"]
    assert all(run["transactions"] > 0 for run in steps["split"]["runs"])
    # a schema step is compared with its `from` across segments: unpaired
    assert steps["split"]["compared_with"] == "mixed"
    assert steps["split"]["ratio_vs_previous"]["paired"] is False


def test_the_schema_steps_come_last_each_in_a_segment_of_its_own() -> None:
    lab = resolve_lab("login")
    names = [s.name for s in lab.steps]
    schema_steps = [s.name for s in lab.steps if s.schema]
    assert names[-len(schema_steps) :] == schema_steps  # nothing after them sees their tables
    assert names[-1] == "split"  # its view under user_session takes no updates
