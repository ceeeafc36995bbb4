"""Probe steps: timed from Python; a Redis probe without Redis is skipped with the reason."""

from pathlib import Path

import pytest
import redis

from pgopt.cli import main
from pgopt.store import load_document

LAB = """
title = "probes"
[dataset]
setup = ["setup.sql"]
[metric]
name = "values"
unit = "values/s"
[quick]
duration = 1
reps = 2
[[steps]]
name = "baseline"
probe = "nextval"
[[steps]]
name = "batch"
probe = "nextval_batch"
probe_args = { batch = 100 }
[[steps]]
name = "redis"
probe = "redis_incr"
[[checks]]
name = "the sequence advanced"
sql = "select last_value > 1 from seq"
"""


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    folder = tmp_path / "probes"
    folder.mkdir()
    (folder / "lab.toml").write_text(LAB)
    (folder / "setup.sql").write_text("create sequence seq;\n")
    return folder


def test_without_redis_the_redis_step_is_skipped(lab: Path, tmp_path: Path, workdir: Path) -> None:
    out = tmp_path / "out"
    code = main(
        [
            "lab",
            "run",
            str(lab),
            "--quick",
            "--redis",
            "redis://127.0.0.1:1/0",
            "--workdir",
            str(workdir),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    result = load_document(out)
    assert [s["name"] for s in result["steps"]] == ["baseline", "batch"]
    assert result["skipped"][0]["name"] == "redis"
    assert "no Redis at redis://127.0.0.1:1/0" in result["skipped"][0]["reason"]
    for step in result["steps"]:
        assert len(step["metric"]["samples"]) == 2 and step["metric"]["median"] > 0
        assert all(c["passed"] for c in step["checks"])


def test_with_redis_the_comparison_runs(lab: Path, tmp_path: Path, workdir: Path) -> None:
    try:
        redis.Redis(socket_connect_timeout=1).ping()
    except (redis.RedisError, OSError):
        pytest.skip("no Redis at 127.0.0.1:6379")
    out = tmp_path / "out"
    assert (
        main(["lab", "run", str(lab), "--quick", "--workdir", str(workdir), "--out", str(out)]) == 0
    )
    result = load_document(out)
    assert [s["name"] for s in result["steps"]] == ["baseline", "batch", "redis"]
    assert result["steps"][2]["metric"]["median"] > 0
