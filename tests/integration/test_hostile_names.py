"""Names read from a user's server are data, whatever characters they hold: a table
whose name holds a line break and `\\shell`, one with a space, a column with quotes
and a backslash, a schema and a table in Unicode, a sequence whose name closes a
string literal and starts psql's `\\!`. Through `ab --synthesize` (its pgbench
scripts, keys.sql, README.md), `ab --sample` (the sampled copy's psql script) and
`advise` (its missing-index rule on a copy and its proof), nothing runs on pgopt's
host, every table is copied with its rows, and the workload replays it."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document

from .conftest import FULL_SPEED, new_database

pytestmark = pytest.mark.xdist_group("hostile-names")

FLAG = Path(f"/tmp/pgopt-hostile-{uuid.uuid4().hex[:8]}")
# psql's and pgbench's meta-commands that would run FLAG's command, each after a line
# break or a quote that a careless writer lets through
EVIL = f"evil\n\\shell touch {FLAG}\n\\! touch {FLAG}\n"
SPACED = "order items"
QUOTED = "Quote\"d's \\ col"
SCHEMA, UNICODE = "Ünïcødé", "naïve table ☃"
SEQUENCE = f"seq'); \\! touch {FLAG}; --"
ROWS = 20_000  # the sampled tables are over ab/sample.py's 1 MiB


def _names() -> dict[str, sql.Composable]:
    return {
        "evil": sql.Identifier(EVIL),
        "spaced": sql.Identifier(SPACED),
        "quoted": sql.Identifier(QUOTED),
        "unicode": sql.Identifier(SCHEMA, UNICODE),
        "schema": sql.Identifier(SCHEMA),
        "seq": sql.Identifier(SEQUENCE),
    }


SETUP = """\
create table {evil} (id int primary key, {quoted} int not null, pad text not null);
insert into {evil} select i, i % 500, repeat('x', 80) from generate_series(1, {rows}) i;
create table {spaced} (id int primary key, {quoted} int not null, pad text not null);
insert into {spaced} select i, i % 700, repeat('y', 80) from generate_series(1, {rows}) i;
create schema {schema};
create sequence {seq};
create table {unicode} (id bigint primary key default nextval({seq_text}), note text);
insert into {unicode} (note) select 'n' || i from generate_series(1, 500) i;
analyze;
"""


def _workload(folder: Path) -> list[str]:
    """pgbench scripts reading each table (by key and by an unindexed column: the
    missing index), updating one and inserting into the Unicode one."""
    evil, spaced = '"' + EVIL.replace('"', '""') + '"', f'"{SPACED}"'
    quoted = '"' + QUOTED.replace('"', '""') + '"'
    unicode = f'"{SCHEMA}"."{UNICODE}"'
    scripts = {
        "by_id.sql": f"\\set i random(1, {ROWS})\nselect pad from {evil} where id = :i;\n",
        "by_col.sql": f"\\set c random(0, 499)\nselect count(*) from {evil} where {quoted} = :c;\n",
        "spaced.sql": (
            f"\\set c random(0, 699)\nselect count(*) from {spaced} where {quoted} = :c;\n"
        ),
        "write.sql": f"\\set i random(1, {ROWS})\nupdate {spaced} set pad = pad where id = :i;\n",
        "insert.sql": f"insert into {unicode} (note) values ('new');\n",
    }
    args = []
    for name, text in scripts.items():
        (folder / name).write_text(text)
        args += ["-f", str(folder / name)]
    return args


@pytest.fixture(scope="module")
def source(binaries: PgBinaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("hostile")
    with EmbeddedTarget(binaries) as server:
        dsn = new_database(server, "hostile")
        names = _names()
        setup = sql.SQL(SETUP).format(
            **names,
            seq_text=sql.Literal(f'"{SEQUENCE.replace(chr(34), chr(34) * 2)}"'),
            rows=sql.Literal(ROWS),
        )
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(setup)
            conn.execute("select pg_stat_statements_reset(), pg_stat_reset()")
        pgbench = [str(binaries.path("pgbench")), "-n", "-c", "2", "-t", "300", *_workload(folder)]
        subprocess.run([*pgbench, dsn], check=True, capture_output=True)
        yield dsn
    FLAG.unlink(missing_ok=True)


def _nothing_ran() -> None:
    assert not FLAG.exists(), f"a name ran a command on pgopt's host: {FLAG} was made"


def _replay(dsn: str, workdir: Path, out: Path, *extra: str) -> dict[str, Any]:
    args = ["ab", "--source-dsn", dsn, "--synthesize", "--source-sample", "0", "--cover", "100"]
    args += ["--reps", "1", "--duration", "1", "--clients", "2", "--warmup", "0"]
    assert main([*args, "--workdir", str(workdir), "--out", str(out), *extra]) == 0
    _nothing_ran()
    return load_document(out)


@pytest.mark.parametrize(
    "copy", [["--copy", "logical"], ["--sample", "50"]], ids=["dump", "sample"]
)
def test_a_synthesized_replay_of_hostile_names_runs_nothing_and_copies_them(
    source: str,
    workdir: Path,
    tmp_path: Path,
    copy: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = _replay(source, workdir, tmp_path / "out", *copy)
    err = capsys.readouterr().err
    workload = tmp_path / "out" / "workload"
    texts = {p.name: p.read_text() for p in workload.iterdir()}
    # every statement replayed; the reads by key find the rows they find on the source
    # (all of them on a whole copy, about half on a 50% sample): each table was copied
    # with its rows, where a table copied empty finds none
    rows = {r["query"]: r for r in result["fidelity"]["statements"]}
    assert len(rows) == 5, list(rows)
    for row in rows.values():
        assert row["replay_calls"] > 0, row
    (by_id,) = [r for q, r in rows.items() if "where id =" in q and q.startswith("select")]
    share = 0.5 if "--sample" in copy else 1.0
    assert abs(by_id["replay_rows"] - share * by_id["source_rows"]) < 0.15, by_id
    if "--sample" in copy:
        assert f'sampled public."{SPACED}": ' in err  # the regex copied it empty, unsaid
        assert 'sampled public."evil\\n\\shell' in err
    # pgbench ran every script (nothing aborted on a name), and their comments name the
    # tables as SQL does, each on one line, its line breaks written as escapes
    notes = [line for text in texts.values() for line in text.splitlines() if "-- $" in line]
    assert any('"evil\\n\\shell touch' in line for line in notes), notes
    assert SCHEMA in texts["README.md"] and f'"{SPACED}"' in texts["README.md"]


def test_advise_and_its_proofs_run_nothing_on_hostile_names(source: str, tmp_path: Path) -> None:
    out = tmp_path / "advise"
    args = ["advise", "--dsn", source, "--sample", "1", "--cover", "100", "--out", str(out)]
    args += ["--prove", "missing-index", "--prove-duration", "1", "--prove-reps", "3", *FULL_SPEED]
    assert main(args) == 0
    _nothing_ran()
    doc = json.loads((out / "advice.json").read_text())
    tables = {f["index"]["table"] for f in doc["findings"] if f["rule"] == "missing-index"}
    # both unindexed columns found, each table named as SQL names it
    assert any(SPACED in t for t in tables) and any("evil" in t for t in tables), tables
    assert doc["indexes"]["proof"]["set"]
    # each index's comment on one line; its DDL names the table in double quotes
    script = (out / "indexes.sql").read_text()
    assert 'ON public."evil\n\\shell touch' in script
