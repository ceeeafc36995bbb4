"""--dsn: pgopt works in its own database on a user's server and leaves it as it was.

Runs against the machine's own PostgreSQL at 127.0.0.1:5432 when it answers (an
older server: PostgreSQL 15 here), otherwise against a second embedded server
reached only through its DSN.
"""

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document

from .conftest import LOCAL_DSN, local_server_answers

# the machine's PostgreSQL 15 is one server: its users run one at a time
pytestmark = pytest.mark.xdist_group("pg15")

USER_LAB = """
title = "attached"
[dataset]
setup = ["setup.sql"]
[run]
clients = 2
[quick]
duration = 2
reps = 1
warmup = 0
[[steps]]
name = "baseline"
scripts = ["bench.sql"]
[[steps]]
name = "async"
settings = { synchronous_commit = "off", bgwriter_delay = "60ms" }
[[checks]]
name = "rows were inserted"
sql = "select count(*) > 0 from t"
"""


@pytest.fixture(scope="module")
def dsn(binaries: PgBinaries) -> Iterator[str]:
    if local_server_answers():
        yield LOCAL_DSN
        return
    with EmbeddedTarget(binaries) as other:
        yield f"postgresql://postgres@127.0.0.1:{other.port}/postgres"


def server_state(dsn: str) -> dict[str, object]:
    with psycopg.connect(dsn) as conn:
        return {
            "databases": conn.execute(
                "select datname from pg_database where datname like 'pgopt_lab%'"
            ).fetchall(),
            "file_settings": conn.execute(
                "select sourcefile, name, setting from pg_file_settings order by 1, 2"
            ).fetchall(),
            "bgwriter_delay": conn.execute("show bgwriter_delay").fetchone(),
            "db_settings": conn.execute("select count(*) from pg_db_role_setting").fetchone(),
        }


@pytest.fixture
def lab_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "attached"
    folder.mkdir()
    (folder / "lab.toml").write_text(USER_LAB)
    (folder / "setup.sql").write_text("create table t (id bigint, v text);\n")
    (folder / "bench.sql").write_text("insert into t values (1, 'x');\n")
    return folder


def test_without_allow_settings_a_settings_step_is_refused(
    dsn: str, lab_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = server_state(dsn)
    code = main(
        ["lab", "run", str(lab_dir), "--quick", "--dsn", dsn, "--out", str(tmp_path / "out")]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "pass --allow-settings" in err and "Traceback" not in err
    assert server_state(dsn) == before


def test_settings_are_applied_then_reset_and_database_dropped(
    dsn: str, lab_dir: Path, tmp_path: Path
) -> None:
    before = server_state(dsn)
    out = tmp_path / "out"
    code = main(
        ["lab", "run", str(lab_dir), "--quick", "--dsn", dsn, "--allow-settings", "--out", str(out)]
    )
    assert code == 0
    result = load_document(out)
    assert result["target"]["kind"] == "dsn"
    assert [s["name"] for s in result["steps"]] == ["baseline", "async"]
    assert all(c["passed"] for s in result["steps"] for c in s["checks"])
    assert server_state(dsn) == before


def test_sliced_rounds_switch_data_and_settings_and_leave_the_server_as_found(
    dsn: str, lab_dir: Path, tmp_path: Path
) -> None:
    """Fresh steps in slices taking turns: each step's clone parked beside pgopt_lab and
    renamed in at its turn, its settings applied at each; nothing of it stays."""
    toml = lab_dir / "lab.toml"
    toml.write_text(
        toml.read_text().replace('scripts = ["bench.sql"]', 'scripts = ["bench.sql"]\nfresh = true')
    )
    before = server_state(dsn)
    out = tmp_path / "out"
    args = ["--quick", "--reps", "2", "--latencies", "none", "--allow-settings"]
    code = main(["lab", "run", str(lab_dir), *args, "--dsn", dsn, "--out", str(out)])
    assert code == 0
    result = load_document(out)
    assert result["plan"]["segments"][0]["sliced_rounds"] == [1, 2]
    for step in result["steps"]:
        assert all(len(run["slice_tps"]) == 2 and run["tps"] > 0 for run in step["runs"])
        assert all(c["passed"] for c in step["checks"])
    assert server_state(dsn) == before


def test_baseline_only_needs_no_flag(dsn: str, lab_dir: Path, tmp_path: Path) -> None:
    before = server_state(dsn)
    assert (
        main(
            [
                "lab",
                "run",
                str(lab_dir),
                "--quick",
                "--dsn",
                dsn,
                "--steps",
                "baseline",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    assert server_state(dsn) == before


def test_batch_lab_dumps_and_restores_through_the_dsn(dsn: str, tmp_path: Path) -> None:
    """The restore phase is pg_restore into pgopt's own database on the user's server,
    from a dump kept in the run folder only while the run lasts."""
    before = server_state(dsn)
    out = tmp_path / "out"
    args = ["lab", "run", "batch", "--quick", "--reps", "1", "--dsn", dsn, "--steps", "defaults"]
    assert main([*args, "--out", str(out)]) == 0
    result = load_document(out)
    (step,) = result["steps"]
    assert step["phases"][0]["name"] == "restore"
    assert step["checks"] and all(c["passed"] for c in step["checks"]), step["checks"]
    assert not list(out.glob("*.dump"))
    assert server_state(dsn) == before


def test_pg15_binaries_run_smoke(tmp_path: Path, workdir: Path) -> None:
    """`--pg-bin` with Debian's PostgreSQL 15, when it is installed: the whole path
    (initdb, the dataset, pgbench, a setting, the verdicts, the reports) at its shortest."""
    pg15 = Path("/usr/lib/postgresql/15/bin")
    if not (pg15 / "initdb").exists():
        pytest.skip("PostgreSQL 15 binaries are not installed here")
    out = tmp_path / "out"
    assert (
        main(
            [
                "lab",
                "run",
                "smoke",
                "--quick",
                "--steps",
                "baseline,async_commit",
                "--reps",
                "2",
                "--duration",
                "1",
                "--pg-bin",
                str(pg15),
                "--workdir",
                str(workdir),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    result = load_document(out)
    assert result["target"]["server_version"].startswith("15.")
    assert [len(s["runs"]) for s in result["steps"]] == [2, 2]
    assert (out / "report.html").is_file()
