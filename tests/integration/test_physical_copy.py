"""`pgopt ab` on a physical copy of the source (pg_basebackup): the copy is as old as
the source, so a statement reads as many blocks a call on it as on the source, where
a logical copy (pg_dump, restored) is younger and reads fewer; a physical copy that
cannot be made is one line with `--copy physical`, or a logical copy with the reason.
The source is left as found (no replication slot, its rows and pages as they were)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document

from .conftest import FULL_SPEED, LOCAL_DSN, PG15_BIN, local_server_answers, new_database

ROWS = 60_000
SCHEMA = f"""\
create table t (id int primary key, v int not null, pad text not null)
  with (autovacuum_enabled = false);
insert into t select i, i, repeat('x', 60) from generate_series(1, {ROWS}) i;
"""
# a third of the rows updated one by one in a fixed shuffled order: their new versions
# land on the heap's last pages, scattered, and the old ones stay (no vacuum): an aged
# table, the same whatever the load on the machine
AGE = """\
do $$
declare
  key int;
begin
  for key in select id from t order by md5(id::text) limit 20000 loop
    update t set v = v + 1 where id = key;
  end loop;
end $$;
"""
RANGE = (
    f"\\set a random(1, {ROWS - 1000})\n\\set b :a + 999\n"
    "select v from t where id between :a and :b;\n"
)


@pytest.fixture(scope="module")
def aged_source(
    binaries: PgBinaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[EmbeddedTarget, str]]:
    """A source database whose table was aged by random updates, and whose statistics
    were then reset together before its clients read ranges of it for 3 s; its server."""
    folder = tmp_path_factory.mktemp("aged")
    with EmbeddedTarget(binaries) as source:
        dsn = new_database(source, "aged")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(SCHEMA)
            conn.execute("vacuum analyze t")
            conn.execute(AGE)
            conn.execute("select pg_stat_statements_reset(), pg_stat_reset()")
        (folder / "range.sql").write_text(RANGE)
        pgbench = str(binaries.path("pgbench"))
        run = [pgbench, "-n", "-c", "2", "-T", "3", "-f", str(folder / "range.sql"), dsn]
        subprocess.run(run, check=True, capture_output=True)
        yield source, dsn


@pytest.fixture(scope="module")
def aged(aged_source: tuple[EmbeddedTarget, str]) -> str:
    return aged_source[1]


def _state(dsn: str) -> tuple[Any, ...]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("select count(*), sum(v) from t").fetchone()
        pages = conn.execute("select pg_relation_size('t')").fetchone()
        slots = conn.execute("select count(*) from pg_replication_slots").fetchone()
    return rows, pages, slots


def _replay(dsn: str, workdir: Path, out: Path, *extra: str) -> dict[str, Any]:
    command = ["ab", "--source-dsn", dsn, "--synthesize", "--source-sample", "0"]
    command += ["--clients", "2", "--b-setting", "work_mem=8MB", "--reps", "1"]
    command += ["--duration", "1", "--workdir", str(workdir), "--out", str(out), *extra]
    command += FULL_SPEED
    assert main(command) == 0
    return dict(load_document(out))


# server time per call, the source's against the replay's, in the fidelity verdict: work
# on the other core slows the replay alone (a fresh clone's full suite once took it past 2x)
@pytest.mark.serial
def test_a_physical_copy_is_as_old_as_the_source(
    aged: str, workdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _state(aged)
    physical = _replay(aged, workdir, tmp_path / "physical")
    assert physical["time"]["copy_kind"] == "physical"
    assert "as old as the source" in physical["time"]["copy_how"]
    assert "pg_basebackup" in capsys.readouterr().err
    logical = _replay(aged, workdir, tmp_path / "logical", "--copy", "logical")
    assert logical["time"]["copy_kind"] == "logical"

    def ranges(result: dict[str, Any]) -> dict[str, Any]:
        rows = [s for s in result["fidelity"]["statements"] if "between" in s["query"]]
        assert len(rows) == 1
        return dict(rows[0])

    # the same range read, the same rows a call: on the physical copy as many blocks a
    # call as on the source, whose moved rows are scattered over the heap's last third;
    # on the logical one, its rows packed in key order, not (fewer pages, or an index
    # scan that visits a page once a row: the planner's choice on the packed heap)
    aged_read, young_read = ranges(physical), ranges(logical)
    assert 1 / 1.5 <= aged_read["replay_blocks"] / aged_read["source_blocks"] <= 1.5, aged_read
    assert aged_read["within"], aged_read["why"]
    # not watched: the protocol is unknown, and that alone keeps it from faithful
    (reason,) = physical["fidelity"]["reasons"]
    assert reason.startswith("the source's protocol is unknown"), reason
    young = young_read["replay_blocks"] / young_read["source_blocks"]
    assert not 1 / 2 <= young <= 2, young_read
    assert "blocks a call against the source's" in young_read["why"]
    assert logical["fidelity"]["verdict"] != "faithful"
    assert _state(aged) == before  # pg_basebackup's slot was temporary, nothing written


@pytest.mark.xdist_group("pg15")
@pytest.mark.skipif(not local_server_answers(), reason="the machine's PostgreSQL 15 is not up")
def test_a_physical_copy_that_cannot_be_made_is_one_line_or_a_logical_copy(
    tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Debian's PostgreSQL 15: another major version than the embedded 18, and no
    pg_hba.conf line for replication connections."""
    (tmp_path / "read.sql").write_text("select count(*) from pg_class;\n")
    base = ["ab", "--source-dsn", LOCAL_DSN, "--script", str(tmp_path / "read.sql")]
    base += ["--reps", "1", "--duration", "1", "--workdir", str(workdir)]
    cases = {
        "version": (["--copy", "physical"], "the source is PostgreSQL 15 and the copy would"),
        "tables": (["--copy", "physical", "--table", "pg_class"], "--table copies some tables"),
    }
    if (PG15_BIN / "pg_basebackup").exists():
        cases["hba"] = (
            ["--copy", "physical", "--pg-bin", str(PG15_BIN)],
            "pg_basebackup of postgresql://postgres@127.0.0.1:5432/postgres failed",
        )
    for name, (extra, said) in cases.items():
        assert main([*base, *extra, "--out", str(tmp_path / name)]) == 2, name
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert err[-1].startswith("pgopt: error: ") and said in err[-1], (name, err)
    assert main([*base, "--out", str(tmp_path / "auto")]) == 0
    said = capsys.readouterr().err
    assert "pgopt: a logical copy: the source is PostgreSQL 15" in said
    assert load_document(tmp_path / "auto")["time"]["copy_kind"] == "logical"


def test_a_role_without_replication_gets_a_logical_copy_or_one_line(
    aged: str, workdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pg_basebackup needs REPLICATION (or a superuser): a role with neither is said
    before anything is copied."""
    with psycopg.connect(aged, autocommit=True) as conn:
        conn.execute("drop role if exists reader")
        conn.execute("create role reader login")
        conn.execute("grant select on all tables in schema public to reader")
    reader = aged.replace("postgres@", "reader@")
    (tmp_path / "read.sql").write_text("select count(*) from t;\n")
    args = ["ab", "--source-dsn", reader, "--script", str(tmp_path / "read.sql"), "--copy"]
    args += ["physical", "--workdir", str(workdir), "--out", str(tmp_path / "out")]
    assert main(args) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert err == [
        "pgopt: error: --copy physical: the source's role has neither REPLICATION nor "
        "SUPERUSER (pg_basebackup needs one)"
    ]


def test_a_physical_copy_is_paced_and_what_it_reads_is_said_before_it_starts(
    aged_source: tuple[EmbeddedTarget, str],
    workdir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """By default after a spread checkpoint (the source's log says so: not `immediate`)
    and at most --copy-rate (pg_basebackup's --max-rate: the cluster takes its size at
    that rate); one line says what will be read, and how long, before the copy starts
    and in --dry-run; pgopt's own progress lines while it copies."""
    source, dsn = aged_source
    (tmp_path / "read.sql").write_text("select count(*) from t;\n")
    args = ["ab", "--source-dsn", dsn, "--script", str(tmp_path / "read.sql")]
    args += ["--copy-rate", "16M", "--reps", "1", "--duration", "1", "--workdir", str(workdir)]
    assert main([*args, "--dry-run"]) == 0
    (planned,) = [line for line in capsys.readouterr().out.splitlines() if "will read" in line]
    assert planned.startswith("source: the run will read "), planned
    pace = "(pg_basebackup of its whole cluster, at most 16 MiB/s: about "
    spread = (
        "after a spread checkpoint of up to 4.5 min (checkpoint_timeout 5min × "
        "checkpoint_completion_target 0.9), twice that when one is under way"
    )
    assert pace in planned and spread in planned, planned
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("checkpoint")  # the spread checkpoint then has next to nothing to write
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err.splitlines()
    (said,) = [i for i, line in enumerate(err) if line.startswith("pgopt: will read ")]
    assert pace in err[said] and spread in err[said], err[said]
    progress = [
        i for i, line in enumerate(err) if line.startswith("pgopt: copied ") and " of " in line
    ]
    assert progress and said < progress[0], err
    assert any(line.startswith("pgopt: the source's spread checkpoint took ") for line in err)
    time_spent = load_document(tmp_path / "out")["time"]
    assert "(at most 16 MiB/s, after a spread checkpoint)" in time_spent["copy_how"]
    # at 16 MiB/s, not the fraction of a second the cluster takes unthrottled here
    assert time_spent["copy_s"] >= 0.8 * time_spent["copy_bytes"] / (16 << 20), time_spent
    starts = [
        line.split("checkpoint starting: ")[1]
        for line in source.log_file.read_text().splitlines()
        if "checkpoint starting: " in line and "force" in line
    ]
    assert starts[-2:] == ["immediate force wait", "force wait"], starts  # ours, then its
