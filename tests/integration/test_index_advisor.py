"""`pgopt advise`'s missing-index rule on real servers: a database with missing
indexes planted and decoys beside them (bench/index_planted.py), on PostgreSQL 18
(pgopt's own server, pg_stat_statements) and 15 (Debian's, by --dsn, a --queries
file: its generic plans come from PREPARE); every planted index is found, no
decoy is; bad statements are said one by one; the proof measures the set and the
candidate the write estimate rejected."""

import json
import uuid
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import psycopg
import pytest
from bench.index_planted import QUERIES, WORKLOAD, planted_database

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget

from .conftest import FULL_SPEED, LOCAL_DSN, local_server_answers, new_database, small_filesystem

pytestmark = pytest.mark.xdist_group("index-advisor")


@pytest.fixture(scope="module")
def planted(binaries: PgBinaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("planted")
    with EmbeddedTarget(binaries) as server:
        admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        with planted_database(binaries, admin, folder) as dsn:
            yield dsn


def advise(dsn: str, out: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["advise", "--dsn", dsn, "--rule", "missing-index", "--sample", "1",
                 "--out", str(out), *args])  # fmt: skip
    doc = json.loads((out / "advice.json").read_text()) if code == 0 else {}
    if doc:
        schema = json.loads((files("pgopt") / "schemas" / "advice-1.json").read_text())
        jsonschema.validate(doc, schema)
    return code, doc


def big_table(server: EmbeddedTarget, rows: int) -> str:
    """A database with one table of about 150 bytes a row, no index on k (1,000 keys)."""
    dsn = new_database(server, "big")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create table big (id int not null, k int not null, pad text not null)")
        conn.execute(
            "insert into big select i, i % 1000, repeat('x', 110) "
            f"from generate_series(1, {rows}) i"
        )
        conn.execute("vacuum analyze big")
    return dsn


def test_a_copy_that_would_not_fit_is_not_made_and_the_rule_says_why(
    server: EmbeddedTarget,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A 16 MiB filesystem as the work folder: not even the copy's server fits, so the
    rule is not checked, in one line with the sizes, and nothing is written there."""
    dsn = big_table(server, 20_000)
    (tmp_path / "q.sql").write_text("select * from big where k = 7;\n")
    with small_filesystem(16) as disk:
        monkeypatch.setenv("PGOPT_WORKDIR", str(disk))
        code, doc = advise(dsn, tmp_path / "out", "--queries", str(tmp_path / "q.sql"))
        assert list(disk.iterdir()) == []
    assert code == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[advise] will read postgresql://"), err  # before anything
    (line,) = [line for line in err if "not checked" in line]
    said = "[advise] missing-index: not checked: a copy of 1 table(s) needs about "
    assert line.startswith(said) and f"MiB in {disk} (a 1% sample" in line, line
    assert line.endswith("are free"), line
    (entry,) = [n for n in doc["not_checked"] if n["rule"] == "missing-index"]
    assert entry["reason"] == line.split("not checked: ", 1)[1]
    assert "indexes" not in doc and not [f for f in doc["findings"] if f["rule"] == "missing-index"]
    assert "not checked: a copy of 1 table(s)" in (tmp_path / "out" / "indexes.sql").read_text()


def test_a_big_table_is_sampled_where_the_whole_would_not_fit(
    server: EmbeddedTarget,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A table of about 45 MiB and a 128 MiB filesystem: the whole copy would not fit
    (its dump, the restored table, its WAL, a candidate's build), a sample does; the
    plans are checked on it, which is said, and the index on k is still found."""
    dsn = big_table(server, 300_000)
    (tmp_path / "q.sql").write_text("select * from big where k = 7;\n")
    with small_filesystem(128) as disk:
        monkeypatch.setenv("PGOPT_WORKDIR", str(disk))
        code, doc = advise(dsn, tmp_path / "out", "--queries", str(tmp_path / "q.sql"))
        assert list(disk.iterdir()) == []  # the copy and its server removed
    assert code == 0
    err = capsys.readouterr().err.splitlines()
    (read,) = [line for line in err if line.startswith("[advise] missing-index: will read ")]
    sample = doc["indexes"]["sample_percent"]
    assert 0 < sample < 100
    assert f"then {sample:g}% of the rows of the tables of 1 MiB or more" in read, read
    assert "TABLESAMPLE BERNOULLI reads every page of them" in read
    assert f"the plans are checked on a sample: {sample:g}% of the rows" in "\n".join(err)
    assert f"on a sample of {sample:g}% of the rows" in doc["indexes"]["planner"]
    assert [c for c in doc["indexes"]["candidates"] if c["status"] == "chosen"], doc["indexes"]
    (finding,) = [f for f in doc["findings"] if f["rule"] == "missing-index"]
    assert finding["index"]["table"] == "public.big" and "(k)" in finding["index"]["ddl"]


def chosen(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each index to add, by table."""
    out: dict[str, dict[str, Any]] = {}
    for f in doc["findings"]:
        if f["rule"] == "missing-index":
            out.setdefault(f["index"]["table"], f["index"])
    return out


def fates(doc: dict[str, Any], table: str) -> list[tuple[str, str]]:
    return [
        (c["status"], c["why"]) for c in doc["indexes"]["candidates"] if f" {table} " in c["ddl"]
    ]


def columns(index: dict[str, Any]) -> list[str]:
    return [c["expr"] + (" desc" if c["direction"] == "desc" else "") for c in index["columns"]]


def test_planted_indexes_are_found_and_no_decoy(planted: str, tmp_path: Path) -> None:
    code, doc = advise(planted, tmp_path / "out", "--cover", "100")
    assert code == 0
    found = chosen(doc)
    assert columns(found["public.orders"]) == ["customer_id"]  # equality
    assert columns(found["public.events"]) == ["account_id", "happened_at"]  # then a range
    assert columns(found["public.articles"]) == ["published_at desc"]  # a sort under a limit
    assert columns(found["public.line_items"]) == ["product_id"]  # a join key
    assert columns(found["public.customers"]) == ["lower(email)"]  # an expression
    for index in found.values():
        assert index["ddl"].startswith("CREATE INDEX CONCURRENTLY ")
        (first, *_) = index["statements"]
        assert first["cost_after"] < first["cost_before"]
        assert index["name"] in " ".join(first["plan_after"])
    # decoys: a 20-row table, a column of three values, an existing two-column index,
    # and a write-heavy table whose rare read does not pay for the inserts' index
    assert not {"public.settings", "public.shipments", "public.audit"} & set(found)
    assert all(c["columns"][0]["expr"] != "status" for c in found.values())
    assert any("costs the writes more" in why for _s, why in fates(doc, "public.audit"))
    sql = (tmp_path / "out" / "indexes.sql").read_text()
    assert sql.count("CREATE INDEX CONCURRENTLY") == len(found)


def test_queries_file_partial_index_and_bad_statements(
    planted: str, tmp_path: Path, capsys: Any
) -> None:
    queries = tmp_path / "queries.sql"
    queries.write_text(QUERIES + ";\nselect from nowhere where x = $1;\nselec oops;\nbegin\n")
    code, doc = advise(planted, tmp_path / "out", "--queries", str(queries), "--format", "sql")
    assert code == 0
    # --format sql: the script alone on stdout, the reports written beside it
    script = capsys.readouterr().out
    assert script == (tmp_path / "out" / "indexes.sql").read_text()
    assert script.count("CREATE INDEX CONCURRENTLY") == 3
    found = chosen(doc)
    assert found["public.tasks"]["predicate"] is not None  # status = 'pending'
    assert "pending" in found["public.tasks"]["predicate"]
    # LIKE '%...%' where pg_trgm is installed: GIN with its operator class
    assert found["public.customers"]["method"] == "gin"
    assert "gin_trgm_ops" in found["public.customers"]["ddl"]
    refused = {s["query"]: s["refused"] for s in doc["indexes"]["statements"] if "refused" in s}
    assert "no table nowhere" in refused["select from nowhere where x = $1"]
    assert refused["selec oops"].startswith("does not parse")
    assert "has no plan" in refused["begin"]


def test_a_table_the_role_cannot_read_is_said_per_statement(planted: str, tmp_path: Path) -> None:
    """A role that may read orders but not tasks: the tasks statement is refused with
    why, before it is sent; the orders one is advised on."""
    role = f"reader_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(planted, autocommit=True) as conn:
        conn.execute(f"create role {role} login")
        conn.execute(f"grant select on orders to {role}")
    try:
        queries = tmp_path / "queries.sql"
        queries.write_text(QUERIES)
        dsn = planted.replace("postgres@", f"{role}@", 1)
        code, doc = advise(dsn, tmp_path / "out", "--queries", str(queries))
    finally:
        with psycopg.connect(planted, autocommit=True) as conn:
            conn.execute(f"drop owned by {role}")
            conn.execute(f"drop role {role}")
    assert code == 0
    refused = {
        s["query"].split(" where ")[0]: s.get("refused") for s in doc["indexes"]["statements"]
    }
    assert refused["select id from tasks"] == (
        "this role may not read tasks: grant it SELECT to have the statement checked"
    )
    assert refused["select id from orders"] is None
    assert set(chosen(doc)) == {"public.orders"}


def test_queries_file_missing_or_empty(planted: str, tmp_path: Path, capsys: Any) -> None:
    empty = tmp_path / "empty.sql"
    empty.write_text("-- nothing\n\n")
    argv = ["advise", "--dsn", planted, "--rule", "lock-queue", "--format", "sql"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert "add --rule missing-index" in capsys.readouterr().err
    for path in (tmp_path / "absent.sql", empty):
        code = main(
            ["advise", "--dsn", planted, "--queries", str(path), "--out", str(tmp_path / "o")]
        )
        assert code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"pgopt: error: --queries {path}"), err


def test_proof_measures_the_set_and_the_rejected_write_heavy_index(
    binaries: PgBinaries, tmp_path: Path
) -> None:
    """The lookup, the range, the audit inserts and their rare read: two indexes to
    add, each left out in turn, and one rejected by the write estimate, added to
    them. Which way each goes is the measurement's to say (1-s runs on a shared
    machine); the plumbing is asserted: each step measured, its verdict worded,
    each replayed statement timed under A and B, the plans that changed named."""
    keep = ("lookup.sql", "range.sql", "audit_write.sql", "audit_read.sql")
    workload = {k: v for k, v in WORKLOAD.items() if k in keep}
    with EmbeddedTarget(binaries) as server:
        admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        with planted_database(binaries, admin, tmp_path, workload) as dsn:
            code, doc = advise(
                dsn, tmp_path / "out", "--cover", "100", "--prove", "missing-index",
                "--prove-duration", "1", "--prove-reps", "3", *FULL_SPEED,
            )  # fmt: skip
    assert code == 0
    found = {f["index"]["table"]: f for f in doc["findings"] if f["rule"] == "missing-index"}
    assert set(found) == {"public.orders", "public.events"}
    verdicts = ("proven faster (×", "no measurable effect (×", "slower (×", "not proven: (×")
    verdicts = (*verdicts[:3], "not proven: inconclusive (×")
    left_out = ("earns its place", "does not earn its place", "no measurable effect", "undecided")
    for finding in found.values():
        assert finding["proof"].startswith(verdicts), finding["proof"]
        assert finding["index"]["proof"]["left_out"].startswith(left_out)
        assert "3 rounds" in finding["index"]["proof"]["left_out"]
    proof = doc["indexes"]["proof"]
    (added,) = proof["added"]
    assert "audit" in added["ddl"] and "3 rounds" in added["verdict"]
    assert added["verdict"].startswith(
        ("the estimate was wrong", "rejection confirmed", "rejection stands", "undecided")
    )
    effects = {e["query"].split()[0]: e for e in proof["statements"]}
    assert set(effects) == {"select", "insert"} and effects["insert"]["writes"]
    assert 3 <= len(proof["statements"]) <= 4  # the rare audit read may miss a 1-s run
    assert all(e["ms_per_call_a"] > 0 and e["ms_per_call_b"] > 0 for e in proof["statements"])
    # the A/B's own report names the plan the index changed
    report = (Path(proof["run"]) / "report.md").read_text()
    assert "Index Scan using orders_customer_id_idx" in report


@pytest.mark.xdist_group("pg15")
@pytest.mark.skipif(not local_server_answers(), reason="no PostgreSQL on 127.0.0.1:5432")
def test_postgresql_15_generic_plans_by_prepare(binaries: PgBinaries, tmp_path: Path) -> None:
    """Debian's 15 has no pg_stat_statements preloaded: the rule says so without a
    --queries file, and with one plans by PREPARE (force_generic_plan)."""
    with planted_database(binaries, LOCAL_DSN, tmp_path, {}) as dsn:
        code, doc = advise(dsn, tmp_path / "plain")
        assert code == 0
        assert [n["rule"] for n in doc["not_checked"]] == ["missing-index"]
        assert "not checked" in (tmp_path / "plain" / "indexes.sql").read_text()
        queries = tmp_path / "queries.sql"
        queries.write_text(QUERIES)
        code, doc = advise(dsn, tmp_path / "out", "--queries", str(queries))
    assert code == 0
    assert doc["evidence"]["server_version_num"] // 10000 == 15
    found = chosen(doc)
    assert columns(found["public.orders"]) == ["customer_id"]
    assert "pending" in (found["public.tasks"]["predicate"] or "")
