"""An A/B across PostgreSQL versions on real servers: Debian's PostgreSQL 15 and the
wheel's 18, each a throwaway server of pgopt's, the same data and workload on both.

The workload reads a table by the second column of a two-column index whose first
column has four values: PostgreSQL 18 reads it with a skip scan (four descents of
the index), where 15 scans the table: about 100 times faster on this machine, an
effect no busy machine hides. The tests assert that, the version tags, the plans
and statements that changed, and the refusals of bad input before any server
starts."""

import subprocess
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document

from .conftest import LOCAL_DSN, local_server_answers

PG15_BIN = Path("/usr/lib/postgresql/15/bin")
pytestmark = pytest.mark.skipif(
    not (PG15_BIN / "postgres").exists(), reason="no PostgreSQL 15 in /usr/lib/postgresql/15/bin"
)

SCHEMA = """\
create table readings (sensor int not null, taken int not null, value float8 not null);
insert into readings select i % 4, i, random() from generate_series(1, 100000) i;
create index readings_sensor_taken on readings (sensor, taken);
"""
BY_TIME = "\\set t random(1, 100000)\nselect value from readings where taken = :t;\n"


def files(folder: Path) -> list[str]:
    folder.mkdir()
    (folder / "schema.sql").write_text(SCHEMA)
    (folder / "by_time.sql").write_text(BY_TIME)
    return ["--setup", str(folder / "schema.sql"), "--script", str(folder / "by_time.sql")]


def run(workdir: Path, out: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code = main([*args, "--workdir", str(workdir), "--out", str(out)])
    return code, load_document(out)


def test_an_upgrade_ab_runs_each_side_on_its_version(
    tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = files(tmp_path / "ab")
    # a setting for both that only 17 and later have: on B only, and said
    shared = ["--setting", "enable_group_by_reordering=off", "--setting", "jit=off"]
    code, result = run(
        workdir, tmp_path / "out", "ab", *data, *shared, "--a-pg-bin", str(PG15_BIN),
        "--reps", "3", "--duration", "1",
    )  # fmt: skip
    assert code == 0
    assert "--setting enable_group_by_reordering applies to b only" in capsys.readouterr().err
    a, b = result["steps"]
    assert a["settings"] == {"jit": "off"}
    assert b["settings"] == {"jit": "off", "enable_group_by_reordering": "off"}
    assert a["server"]["server_version"].startswith("15.")
    assert b["server"]["server_version"].startswith("18.")
    assert a["server"]["pg_bin"] == str(PG15_BIN)
    assert result["title"] == (
        f"PostgreSQL {a['server']['server_version']} against "
        f"PostgreSQL {b['server']['server_version']}"
    )
    # the skip scan of 18 against 15's scan of the table
    assert b["verdict_vs_previous"] == "faster", b["ratio_vs_previous"]
    (plan_a,) = [p for p in a["plans"] if "readings" in p["query"]]
    (plan_b,) = [p for p in b["plans"] if "readings" in p["query"]]
    assert "Seq Scan" in plan_a["shape"][0] and "Index" in plan_b["shape"][0]
    across = result["target"]["settings_across"]
    assert "io_method" in across["only_b"] and "old_snapshot_threshold" in across["only_a"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "b vs a: faster" in report and "select value from readings" in report
    assert "between PostgreSQL 15." in report
    # `runs` shows both versions
    capsys.readouterr()
    assert main(["runs", "--dir", str(tmp_path)]) == 0
    assert f"PG {a['server']['server_version']} (a)," in capsys.readouterr().out


def test_a_lab_runs_each_step_on_both_versions(tmp_path: Path, workdir: Path) -> None:
    code, result = run(
        workdir, tmp_path / "out", "lab", "run", "smoke", "--steps", "select_only",
        "--a-pg-bin", str(PG15_BIN), "--reps", "3", "--duration", "1",
    )  # fmt: skip
    assert code == 0
    names = [(s["name"], s["server"]["name"], s.get("compared_with")) for s in result["steps"]]
    assert names == [
        ("baseline-a", "a", None),
        ("baseline-b", "b", "baseline-a"),
        ("select_only-a", "a", None),
        ("select_only-b", "b", "select_only-a"),
    ]


def test_bad_input_is_one_line_and_exit_2_before_any_server_starts(
    tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str], server: EmbeddedTarget
) -> None:
    data = files(tmp_path / "ab")

    def refused(*args: str) -> str:
        assert main(["ab", *data, "--workdir", str(workdir), *args]) == 2
        lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        assert len(lines) == 1, lines
        assert not list(workdir.iterdir())  # no server was started
        return lines[0]

    line = refused("--b-pg-bin", str(PG15_BIN), "--b-setting", "io_method=sync")
    assert line.startswith("pgopt: error: --b-setting io_method: PostgreSQL 15.")
    assert refused("--a-pg-bin", str(tmp_path)).startswith(
        f"pgopt: error: --a-pg-bin {tmp_path}: no pgbench, psql, initdb, postgres there"
    )
    assert "not with --dsn" in refused("--a-pg-bin", str(PG15_BIN), "--dsn", "postgresql:///x")
    # a source newer than the older side: its dump is not that version's SQL
    name = f"src_{uuid.uuid4().hex[:8]}"
    with server.connect() as conn:
        conn.execute(f"create database {name}")
    source = f"postgresql://postgres@127.0.0.1:{server.port}/{name}"
    line = refused("--source-dsn", source, "--a-pg-bin", str(PG15_BIN))
    assert "the source is PostgreSQL 18: side a's PostgreSQL 15." in line
    # so is an archive written by pg_dump 18, before pg_restore turns it into SQL
    dump = tmp_path / "new.dump"
    pg_dump = server.binaries.path("pg_dump")
    subprocess.run([str(pg_dump), "-Fc", "-f", str(dump), source], check=True)
    line = refused("--dump", str(dump), "--a-pg-bin", str(PG15_BIN))
    assert line.startswith("pgopt: error: the dump was written by pg_dump 18.")


@pytest.mark.xdist_group("pg15")
def test_a_dump_of_the_older_version_reaches_both_sides(tmp_path: Path, workdir: Path) -> None:
    """An archive of pg_dump 15 (Debian's PostgreSQL 15 as the user's server): 15's
    pg_restore reads it for A, 18's for B."""
    if not local_server_answers():
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    name = f"pgopt_dump_{uuid.uuid4().hex[:8]}"
    base = LOCAL_DSN.rsplit("/", 1)[0]
    with psycopg.connect(LOCAL_DSN, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    try:
        with psycopg.connect(f"{base}/{name}", autocommit=True) as conn:
            conn.execute(SCHEMA)
        dump = tmp_path / "old.dump"
        subprocess.run(
            [str(PG15_BIN / "pg_dump"), "-Fc", "-f", str(dump), f"{base}/{name}"], check=True
        )
    finally:
        with psycopg.connect(LOCAL_DSN, autocommit=True) as conn:
            conn.execute(f"drop database if exists {name} with (force)")
    (tmp_path / "by_time.sql").write_text(BY_TIME)
    code, result = run(
        workdir, tmp_path / "out", "ab", "--dump", str(dump), "--script",
        str(tmp_path / "by_time.sql"), "--a-pg-bin", str(PG15_BIN), "--reps", "3",
        "--duration", "1",
    )  # fmt: skip
    assert code == 0
    assert [len(s["runs"]) for s in result["steps"]] == [3, 3]


def test_the_same_binaries_on_both_sides_are_an_a_a(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = files(tmp_path / "ab")
    both = ["--a-pg-bin", str(PG15_BIN), "--b-pg-bin", str(PG15_BIN)]
    assert main(["ab", *data, *both, "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "an A/A across two servers" in captured.err
    assert captured.out.count("PostgreSQL 15.") >= 2 and "server b:" in captured.out


@pytest.mark.serial
def test_the_same_version_on_both_sides_is_never_directional(
    tmp_path: Path, workdir: Path, binaries: PgBinaries
) -> None:
    """18 against 18 on two servers: `faster` or `slower` would be a false verdict,
    which the rule allows 5% of the time (half of it each way); a second run with
    another seed decides, so a correct rule fails this about 0.25% of the time."""
    data = files(tmp_path / "ab")
    same = ["--a-pg-bin", str(binaries.bindir), "--b-pg-bin", str(binaries.bindir)]
    for seed in ("1", "2"):
        code, result = run(
            workdir, tmp_path / f"out{seed}", "ab", *data, *same,
            "--reps", "3", "--duration", "1", "--seed", seed,
        )  # fmt: skip
        assert code == 0
        a, b = result["steps"]
        assert a["server"]["pg_bin"] == b["server"]["pg_bin"] != ""
        assert result["target"]["settings_across"]["defaults_changed"] == {}
        if b["verdict_vs_previous"] not in ("faster", "slower"):
            return
    pytest.fail("the same version on both sides was called faster or slower twice")
