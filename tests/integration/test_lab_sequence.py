"""The sequence lab: unique values across concurrent clients, values/s = tps x values
per call, the article's full matrix, and the Redis steps run or skipped with a reason."""

import re
from itertools import product
from pathlib import Path
from typing import Any

import pytest
import redis

from pgopt.cli import main
from pgopt.lab.catalog import resolve_lab
from pgopt.lab.spec import Lab
from pgopt.store import load_document

REDIS_STEPS = ("py_redis_incr", "py_redis_pipelined")


@pytest.fixture(scope="module")
def lab() -> Lab:
    return resolve_lab("sequence")


def run_lab(out: Path, workdir: Path, steps: str, *extra: str) -> dict[str, Any]:
    code = main(
        [
            "lab",
            "run",
            "sequence",
            "--quick",
            "--duration",
            "1",
            "--reps",
            "1",
            "--steps",
            steps,
            "--workdir",
            str(workdir),
            "--out",
            str(out),
            *extra,
        ]
    )
    assert code == 0
    result: dict[str, Any] = load_document(out)
    return result


def redis_answers() -> bool:
    try:
        redis.Redis(socket_connect_timeout=1).ping()
    except (redis.RedisError, OSError):
        return False
    return True


def test_the_matrix_is_complete_and_each_cell_counts_its_values(lab: Lab) -> None:
    """Sixteen cells: 1|64 sequences x cache x 1|many clients x 1|100,000 values per call."""
    cells = {
        (seqs, cache, clients, calls)
        for seqs, cache, clients, calls in product(
            ("one", "s64"), ("nc", "c"), ("c1", "cN"), ("each", "batch")
        )
    }
    names = {s.name for s in lab.steps}
    assert {"_".join(c) for c in cells} <= names
    for step in lab.steps:
        if step.probe is not None:
            continue
        text = "".join(s.path.read_text() for s in step.scripts if s.path)
        batch = re.search(r"generate_series\(\s*(\d+),\s*(\d+)\)", text)
        if step.name.endswith("_batch"):
            assert batch and step.per_transaction == int(batch.group(2)), step.name
        elif step.name.endswith("_each"):
            assert batch is None and step.per_transaction == 1, step.name
        if step.name.endswith("_c1_each") or step.name.endswith("_c1_batch"):
            assert step.clients == 1, step.name
        if "_cN_" in step.name:
            assert step.clients > 1, step.name
        assert step.mode == "prepared", step.name
    # the article's twelve cells keep its figures
    reported = [s for s in lab.steps if s.reported and s.probe is None]
    assert len(reported) == 12
    assert all(s.reported and s.reported.unit == "values/s" for s in reported)


def test_values_are_unique_and_the_metric_is_values_per_second(
    lab: Lab, tmp_path: Path, workdir: Path
) -> None:
    steps = (
        "one_nc_c1_batch,one_c_cN_each,s64_c_cN_batch,pick_c_cN_batch,hilo_cN,"
        "unique_nocache,unique_cache,unique_hilo,py_nextval,py_redis_incr"
    )
    result = run_lab(tmp_path / "out", workdir, steps)
    assert result["passed"]
    by_name = {s["name"]: s for s in result["steps"]}
    for name, step in by_name.items():
        assert all(c["passed"] for c in step["checks"]), (name, step["checks"])
        spec = lab.step(name)
        assert step["metric"]["median"] > 0, name
        if spec.probe is not None:
            continue
        assert "no transaction failed" in {c["name"] for c in step["checks"]}
        for run in step["runs"]:
            assert run["value"] == pytest.approx(run["tps"] * spec.per_transaction), name
    # every uniqueness run stored what its clients drew, from several clients at once
    # (exactly: --quick has no warm-up, which would store a second's worth more)
    for name in ("unique_nocache", "unique_cache", "unique_hilo"):
        spec, facts = lab.step(name), by_name[name]["facts"]
        assert spec.transactions is not None
        assert int(facts["values"]) == spec.transactions * spec.clients * spec.per_transaction
        assert int(facts["clients"]) == spec.clients > 1
    # without a cache nothing is lost; a cache loses the rest of every session's block
    assert int(by_name["unique_nocache"]["facts"]["gaps"]) == 0
    assert int(by_name["unique_hilo"]["facts"]["gaps"]) == 0
    assert int(by_name["unique_cache"]["facts"]["gaps"]) > 0
    if redis_answers():
        assert by_name["py_redis_incr"]["metric"]["median"] > 0
    else:
        assert "py_redis_incr" in {s["name"] for s in result["skipped"]}


def test_without_redis_its_steps_are_skipped_with_the_reason(tmp_path: Path, workdir: Path) -> None:
    result = run_lab(
        tmp_path / "out",
        workdir,
        ",".join((*REDIS_STEPS, "py_nextval", "py_nextval_batch")),
        "--redis",
        "redis://127.0.0.1:1/0",
    )
    names = [s["name"] for s in result["steps"]]
    assert names == ["one_nc_c1_each", "py_nextval", "py_nextval_batch"]
    skipped = {s["name"]: s["reason"] for s in result["skipped"]}
    assert set(skipped) == set(REDIS_STEPS)
    assert all("no Redis at redis://127.0.0.1:1/0" in r for r in skipped.values())
