"""The shards lab: two shard servers pgopt starts beside its own, the keylookup rows
hash-partitioned over them through postgres_fdw; every step returns exactly the
rows one server returns, and nothing is left afterwards."""

from pathlib import Path

from pgopt.cli import main
from pgopt.store import load_document

from .conftest import pgopt_processes


def test_shards_return_the_local_rows_and_push_work_down(tmp_path: Path, workdir: Path) -> None:
    out = tmp_path / "shards"
    args = ["lab", "run", "shards", "--quick", "--reps", "1", "--duration", "1"]
    args += ["--steps", "sharded,scan_pushdown,fetch_size", "--workdir", str(workdir)]
    assert main([*args, "--out", str(out)]) == 0
    result = load_document(out)
    steps = {s["name"]: s for s in result["steps"]}
    assert list(steps) == ["local", "sharded", "scan_pushdown", "fetch_size"]
    for step in steps.values():  # the check ran after every step, under its options
        (same_rows,) = [c for c in step["checks"] if c["name"].startswith("the shards return")]
        assert same_rows["passed"] is True
    facts = {name: step["facts"] for name, step in steps.items()}
    assert "WHERE ((typeid = 1))" in facts["sharded"]["remote_sql"]  # the key is sent along
    assert "count(*)" in facts["scan_pushdown"]["remote_sql"]  # each shard counts its own
    assert "count(*)" not in facts["sharded"]["remote_sql"]
    sharded = facts["sharded"]
    assert float(sharded["shard1 server CPU, % of a core"]) > 0
    assert float(sharded["shard2 server CPU, % of a core"]) > 0
    assert len(result["target"]["shards"]) == 2
    assert pgopt_processes(str(workdir)) == []
    assert list(workdir.iterdir()) == []
