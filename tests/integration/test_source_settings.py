"""`pgopt ab --source-dsn`: A and B start from the source's own settings, those that
shape how its statements run (its server's and its database's), with B's change and
--setting on top; the source is only read, and its settings stay as they were."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document

from .conftest import new_database


def test_a_and_b_run_with_the_sources_settings_under_their_own(
    server: EmbeddedTarget, workdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn = new_database(server, "tuned")
    name = dsn.rsplit("/", 1)[1]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create table t as select g as id from generate_series(1, 1000) g")
        # the source's own: its database's planner costs, its isolation level, and a
        # log setting, which is not the replay's to carry
        conn.execute(f"alter database {name} set random_page_cost = 1.1")
        conn.execute(f"alter database {name} set work_mem = '8MB'")
        conn.execute(f"alter database {name} set default_transaction_isolation = 'repeatable read'")
        conn.execute(f"alter database {name} set log_min_duration_statement = 250")
    (tmp_path / "read.sql").write_text("select count(*) from t;\n")
    out = tmp_path / "out"
    args = ["ab", "--source-dsn", dsn, "--script", str(tmp_path / "read.sql")]
    args += ["--copy", "logical", "--b-setting", "work_mem=16MB", "--setting", "jit=off"]
    args += ["--reps", "1", "--duration", "1", "--workdir", str(workdir), "--out", str(out)]
    assert main(args) == 0
    said = capsys.readouterr().err
    assert "pgopt: A and B start from the source's 3 settings that shape how" in said, said
    result = load_document(out)
    settings = {s["name"]: s["settings"] for s in result["steps"]}
    assert settings["a"] == {
        "default_transaction_isolation": "repeatable read",
        "jit": "off",  # --setting, for both
        "random_page_cost": "1.1",
        "work_mem": "8MB",
    }
    assert settings["b"] == {**settings["a"], "work_mem": "16MB"}  # B's own on top
    # in force on the server the runs used, not only written down
    applied = result["target"]["non_default_settings"]
    assert applied["random_page_cost"] == "1.1"
    assert "log_min_duration_statement" not in applied
    with psycopg.connect(dsn) as conn:  # the source as it was
        row = conn.execute("select current_setting('random_page_cost')").fetchone()
        assert row == ("1.1",)
