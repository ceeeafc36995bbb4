"""The ingest lab: three ways of writing login records, the same rows each way."""

from pathlib import Path

from pgopt.cli import main
from pgopt.lab import load_lab
from pgopt.lab.catalog import LABS_DIR
from pgopt.probes.base import ProbeContext
from pgopt.probes.ingest import copy_rows
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document


def test_every_way_writes_the_same_rows(tmp_path: Path, workdir: Path) -> None:
    out = tmp_path / "ingest"
    args = ["lab", "run", "ingest", "--quick", "--reps", "1", "--duration", "1"]
    assert main([*args, "--workdir", str(workdir), "--out", str(out)]) == 0
    result = load_document(out)
    steps = {s["name"]: s for s in result["steps"]}
    assert list(steps) == ["row_per_statement", "multi_row_insert", "copy"]
    for step in steps.values():
        assert step["metric"]["median"] > 0
        assert [c["passed"] for c in step["checks"]] == [True], step["name"]
    assert result["metric"]["unit"] == "rows/s"


def test_the_check_refuses_a_missing_a_doubled_or_a_wrong_row(server: EmbeddedTarget) -> None:
    lab = load_lab(LABS_DIR / "ingest")
    check = lab.checks[0].sql
    with server.connect() as conn:
        conn.execute((LABS_DIR / "ingest" / "schema.sql").read_text())
    copy_rows(ProbeContext(server, 0.2, {"rows_per_commit": 100}, None))
    spoil = {
        "as written": None,
        "a row missing": "delete from login_ingest where seq = 50",
        "a row twice": "insert into login_ingest select * from login_ingest where seq = 50",
        "a wrong address": "update login_ingest set ip = '10.0.0.1' where seq = 50",
        "a wrong time": "update login_ingest set login_time = now() where seq = 7",
    }
    seen = {}
    for name, sql in spoil.items():
        with server.connect(autocommit=False) as conn:
            if sql:
                conn.execute(sql)
            row = conn.execute(check).fetchone()
            seen[name] = row is not None and row[0] is True
            conn.rollback()
    assert seen == {name: name == "as written" for name in spoil}
    with server.connect() as conn:
        conn.execute("drop table login_ingest")
