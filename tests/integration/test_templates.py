"""Fresh steps on real servers: each variant's data is built once into a template;
a workload that writes starts every run from a clone of it (nothing a run wrote is
there for the next), one that only reads runs on the template itself; B's SQL is
applied once, not once a run."""

from pathlib import Path
from typing import Any

from pgopt.cli import main
from pgopt.store import load_document

DATA = """\
create table events (id bigint generated always as identity primary key, v int not null);
create table accounts as select g as id, 0 as balance from generate_series(1, 20000) g;
alter table accounts add primary key (id);
"""
INSERT = "\\set v random(1, 1000)\ninsert into events (v) values (:v);\n"
READ = "\\set id random(1, 20000)\nselect balance from accounts where id = :id;\n"
FACTS = """\
[steps.facts]
rows = "select count(*) from events"
database = "select oid from pg_database where datname = current_database()"
"""
LAB = """\
title = "fresh steps"
[dataset]
setup = ["data.sql"]
[metric]
name = "transactions"
unit = "tx/s"
[run]
clients = 1
duration = 1
reps = 2
warmup = 0

[[steps]]
name = "a"
title = "A"
scripts = ["{script}"]
fresh = true
{facts}
[[steps]]
name = "b"
title = "B: the count of its SQL's applications goes up by one each time"
schema = ["b.sql"]
{facts}"""


def write_lab(folder: Path, script: str, count_file: Path) -> Path:
    folder.mkdir()
    count_file.touch()
    count_file.chmod(0o666)  # the server's user appends to it
    (folder / "data.sql").write_text(DATA)
    (folder / "insert.sql").write_text(INSERT)
    (folder / "read.sql").write_text(READ)
    (folder / "b.sql").write_text(
        f"copy (select 'applied') to program 'cat >> {count_file}';\ncreate index on events (v);\n"
    )
    (folder / "lab.toml").write_text(LAB.format(script=script, facts=FACTS))
    return folder


def run_lab(folder: Path, workdir: Path, out: Path, *extra: str) -> dict[str, Any]:
    args = ["lab", "run", str(folder), "--workdir", str(workdir), "--out", str(out), *extra]
    assert main(args) == 0
    return load_document(out)


def runs(result: dict[str, Any], step: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = next(s for s in result["steps"] if s["name"] == step)["runs"]
    return found


def run_fresh_lab(
    script: str, tmp_path: Path, workdir: Path, *extra: str
) -> tuple[dict[str, Any], Path]:
    """The lab with `script` as A's and B's workload; its result, and the file B's SQL
    appends a line to each time it is applied (where the server's user may write)."""
    count = workdir / "applied.txt"
    folder = write_lab(tmp_path / "lab", script, count)
    return run_lab(folder, workdir, tmp_path / "out", *extra), count


def test_a_writing_workload_starts_every_run_from_the_same_data(
    tmp_path: Path, workdir: Path
) -> None:
    result, count = run_fresh_lab("insert.sql", tmp_path, workdir)
    assert result["time"]["runs_from"] == "clone"
    assert "insert.sql writes" in result["time"]["how"]
    for step in ("a", "b"):
        for run in runs(result, step):
            # the rows in the table are the ones this run inserted: none left from before
            assert run["transactions"] > 0
            assert int(run["facts"]["rows"]) == run["transactions"]
        assert len({run["facts"]["database"] for run in runs(result, step)}) == 2  # clones
    assert count.read_text().splitlines() == ["applied"]  # B's SQL: once, not once a run
    assert [t["steps"] for t in result["time"]["templates"]] == [["a"], ["b"]]
    spent = result["time"]
    assert spent["runs"] == 4 and spent["measure_s"] > 0 and spent["prepare_s"] > 0


def test_in_slices_each_step_keeps_its_own_clone_through_the_round(
    tmp_path: Path, workdir: Path
) -> None:
    """Slices taking turns: A's clone and B's both live through the round, each renamed
    in at its turn, so the rows in each are exactly its own slices' transactions."""
    result, count = run_fresh_lab(
        "insert.sql", tmp_path, workdir, "--duration", "2", "--latencies", "none"
    )
    assert result["plan"]["segments"][0]["sliced_rounds"] == [1, 2]
    for step in ("a", "b"):
        for run in runs(result, step):
            assert len(run["slice_tps"]) == 2
            assert run["transactions"] > 0
            assert int(run["facts"]["rows"]) == run["transactions"]
        assert len({run["facts"]["database"] for run in runs(result, step)}) == 2  # per round
    assert count.read_text().splitlines() == ["applied"]


def test_a_read_only_workload_runs_on_its_template_without_rebuilding(
    tmp_path: Path, workdir: Path
) -> None:
    result, count = run_fresh_lab("read.sql", tmp_path, workdir)
    assert result["time"]["runs_from"] == "template"
    for step in ("a", "b"):
        assert len({run["facts"]["database"] for run in runs(result, step)}) == 1  # the same
    a, b = (runs(result, s)[0]["facts"]["database"] for s in ("a", "b"))
    assert a != b  # each variant its own
    assert count.read_text().splitlines() == ["applied"]


def test_a_write_the_reading_missed_fails_the_run_and_leaves_the_template(
    tmp_path: Path, workdir: Path, capsys: Any
) -> None:
    """A SELECT of a function that writes reads as read-only; the read-only sessions
    refuse the write, so the template is never changed."""
    count = workdir / "applied.txt"  # where the server's user may write
    folder = write_lab(tmp_path / "lab", "sneaky.sql", count)
    (folder / "data.sql").write_text(
        DATA + "create function add_event() returns int language sql "
        "as 'insert into events (v) values (1) returning 1';\n"
    )
    (folder / "sneaky.sql").write_text("select add_event();\n")
    out = tmp_path / "out"
    code = main(["lab", "run", str(folder), "--workdir", str(workdir), "--out", str(out)])
    assert code != 0
    err = capsys.readouterr().err
    assert "read-only transaction" in err, err


def test_steps_whose_data_together_crowds_shared_buffers_run_whole(
    tmp_path: Path, workdir: Path
) -> None:
    """The sliced lab above, with shared_buffers smaller than A's clone and B's
    together: taking turns, each would evict the other's pages, so the rounds run
    whole and the plan says why (the test above is the same lab fitting, in slices)."""
    count = workdir / "applied.txt"
    folder = write_lab(tmp_path / "lab", "insert.sql", count)
    small = 'settings = { shared_buffers = "4MB" }\n'
    toml = (folder / "lab.toml").read_text()
    toml = toml.replace("fresh = true\n", f"fresh = true\n{small}")
    toml = toml.replace('schema = ["b.sql"]\n', f'schema = ["b.sql"]\n{small}')
    (folder / "lab.toml").write_text(toml)
    out = tmp_path / "out"
    result = run_lab(folder, workdir, out, "--duration", "2", "--latencies", "none")
    segment = result["plan"]["segments"][0]
    assert segment["sliced_rounds"] == []
    assert "more than shared_buffers (4 MiB)" in segment["why_whole"]
    for step in ("a", "b"):
        for run in runs(result, step):
            assert "slice_tps" not in run and run["transactions"] > 0
    assert "whole runs (the steps' data together" in (out / "report.md").read_text()
