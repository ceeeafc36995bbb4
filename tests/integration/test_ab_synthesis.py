"""`pgopt ab --synthesize` on real servers: a known weighted workload runs on a source
with pg_stat_statements; the workload pgopt makes from it replays each statement's
share of calls within a few points, and its fidelity table says so."""

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document

from .conftest import FULL_SPEED, new_database

SCHEMA = """\
create table orders (id bigint generated always as identity primary key,
                     customer_id int not null, status text not null);
insert into orders (customer_id, status)
select (random() * 5000)::int, (array['new', 'paid', 'shipped'])[1 + i % 3]
from generate_series(1, 30000) i;
create index orders_customer on orders (customer_id);
create table notes (id int primary key, body text);
insert into notes select i, 'note ' || i from generate_series(1, 2000) i;
analyze;
"""
# the known mix: weights 6, 3, 1, and a SET that must be skipped with its reason
SCRIPTS = {
    "by_id.sql": ("\\set i random(1, 30000)\nselect * from orders where id = :i;\n", 6),
    "by_customer.sql": (
        "\\set c random(1, 5000)\nselect count(*) from orders where customer_id = :c;\n",
        3,
    ),
    "by_status.sql": ("select count(*) from orders where status = 'paid';\n", 1),
    "session.sql": ("set application_name = 'shop';\n", 1),
}


@pytest.fixture(scope="module")
def source_server(binaries: PgBinaries) -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget(binaries) as target:
        yield target


@pytest.fixture
def source(source_server: EmbeddedTarget, binaries: PgBinaries, tmp_path: Path) -> str:
    """A database whose pg_stat_statements saw the known mix, run by pgbench."""
    dsn = new_database(source_server, "shop")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SCHEMA)
        # both reset together, as a user would: the counts since then are the mix's own
        conn.execute("select pg_stat_statements_reset(), pg_stat_reset()")
    args = []
    for file, (text, weight) in SCRIPTS.items():
        (tmp_path / file).write_text(text)
        args += ["-f", f"{tmp_path / file}@{weight}"]
    pgbench = str(binaries.path("pgbench"))
    subprocess.run(
        [pgbench, "-n", "-c", "2", "-t", "1500", *args, dsn], check=True, capture_output=True
    )
    return dsn


# server time per call, the source's against the replay's: work on the other core would
# slow the replay alone
@pytest.mark.serial
def test_a_synthesized_workload_replays_the_sources_mix(
    tmp_path: Path, workdir: Path, source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    args = ["ab", "--source-dsn", source, "--synthesize", "--cover", "100", "--source-sample", "0"]
    args += ["--duration", "2", "--reps", "2", "--clients", "2", *FULL_SPEED]
    args += ["--workdir", str(workdir), "--out", str(out)]
    assert main(args) == 0
    result = load_document(out)
    assert [s["name"] for s in result["steps"]] == ["a", "b"]

    workload = out / "workload"
    scripts = sorted(p.name for p in workload.glob("q*.sql"))
    assert scripts == ["q01.sql", "q02.sql", "q03.sql"]
    readme = (workload / "README.md").read_text()
    assert "set application_name" in readme and "session state" in readme
    # not watched: the transaction shape from what the source keeps since the reset
    assert "not watched (--source-sample 0)" in readme
    kept = re.search(r"\| statements a commit \| ([\d.]+), from what the source keeps", readme)
    assert kept is not None and abs(float(kept.group(1)) - 1) < 0.05, readme[:1200]
    texts = "".join((workload / s).read_text() for s in scripts)
    assert "from pg_stats" in texts and "/* pgopt q01 */" in texts

    # the replay's own pg_stat_statements in A's runs: each statement's share of the
    # calls as in the source's mix, and the work of each call as the source's
    fidelity = result["fidelity"]
    rows = {r["query"]: r for r in fidelity["statements"]}
    calls = sum(r["replay_calls"] for r in rows.values())
    expected = {"where id =": 0.6, "customer_id =": 0.3, "status =": 0.1}
    for query, row in rows.items():
        (want,) = (v for k, v in expected.items() if k in query)
        assert abs(row["replay_calls"] / calls - want) < 0.05, (query, row["replay_calls"])
        assert row["within"], (row["why"], row)
    # not watched, the clients given: what is unknown is the protocol alone, said
    (reason,) = fidelity["reasons"]
    assert reason.startswith("the source's protocol is unknown: the replay sent -M simple")
    assert fidelity["verdict"] == "partial"
    assert "Replay partial" in capsys.readouterr().out


def test_a_source_without_pg_stat_statements_is_one_line_and_exit_2(
    tmp_path: Path,
    workdir: Path,
    source_server: EmbeddedTarget,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dsn = f"postgresql://postgres@127.0.0.1:{source_server.port}/postgres"
    args = ["ab", "--source-dsn", dsn, "--synthesize", "--workdir", str(workdir)]
    assert main([*args, "--out", str(tmp_path / "out")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    # what the watch would read, said before anything is read; then the one error
    assert len(err) == 2 and err[0].startswith("pgopt: will read from postgresql://"), err
    assert "and watch its sessions for 10 s" in err[0]
    assert err[1].startswith("pgopt: error: ") and "no pg_stat_statements" in err[1]
    assert "shared_preload_libraries" in err[1]
