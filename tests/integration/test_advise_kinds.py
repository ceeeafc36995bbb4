"""`pgopt advise`'s missing-index rule, and `pgopt ab --table`, on the relations real
databases have, on PostgreSQL 18 (pgopt's own server) and 15 (Debian's, skipped
when absent): a partitioned table (the index on its parent), a materialized view
(copied with its data), a view (the index on the table behind it), a quoted
mixed-case schema, table and column; and one database holding all of them with
a foreign key, a foreign table and pg_stat_statements, where advise with its
default rules succeeds and says what it left out of the copy; `pgopt ab --table`
on a partitioned table and a materialized view."""

import contextlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget

from .conftest import LOCAL_DSN, local_server_answers
from .test_ab import run_ab
from .test_index_advisor import advise, chosen, columns

pytestmark = pytest.mark.xdist_group("advise-kinds")

SCHEMA = """
create table accounts (id int primary key, name text);
insert into accounts select g, 'a' || g from generate_series(1, 2000) g;
create table events (id bigint, account_id int references accounts, happened_at date,
                     payload text) partition by range (happened_at);
create table events_2024_01 partition of events for values from ('2024-01-01') to ('2024-02-01');
create table events_2024_02 partition of events for values from ('2024-02-01') to ('2024-03-01');
insert into events select g, 1 + g % 2000, date '2024-01-01' + (g % 59), repeat('x', 60)
from generate_series(1, 60000) g;
create table posts (id int primary key, author_id int, title text, body text);
insert into posts select g, g % 5000, 'title ' || g, repeat('y', 80)
from generate_series(1, 60000) g;
create view posts_view as select id, author_id, title from posts;
create materialized view posts_materialized as
    select id, author_id, length(body) + id % 7 as size from posts;
create schema "Bar";
create table "Bar"."Foo" ("Id" int, "Name" text, payload text);
insert into "Bar"."Foo" select g, 'n' || g, repeat('z', 80) from generate_series(1, 60000) g;
"""
PARTITIONED = "select payload from events where account_id = $1"
VIEW = "select title from posts_view where author_id = $1"
MATERIALIZED = "select size from posts_materialized where id = $1"
QUOTED = 'select "Name" from "Bar"."Foo" where "Id" = $1'


@contextlib.contextmanager
def shapes_database(admin: str, extra: str = "") -> Iterator[str]:
    name = f"pgopt_kinds_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    dsn = admin.rsplit("/", 1)[0] + f"/{name}"
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(SCHEMA + extra)
            conn.execute("vacuum analyze")
        yield dsn
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"drop database if exists {name} with (force)")


@pytest.fixture(scope="module", params=["18", "15"])
def shapes(request: pytest.FixtureRequest, binaries: PgBinaries) -> Iterator[str]:
    """The database of every shape, on the embedded 18 or the local 15."""
    with contextlib.ExitStack() as stack:
        if request.param == "15":
            if not local_server_answers():
                pytest.skip("no PostgreSQL on 127.0.0.1:5432")
            admin = LOCAL_DSN
        else:
            server = stack.enter_context(EmbeddedTarget(binaries))
            admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        yield stack.enter_context(shapes_database(admin))


def advise_on(dsn: str, tmp_path: Path, *queries: str) -> dict[str, Any]:
    path = tmp_path / "queries.sql"
    path.write_text(";\n".join(queries) + ";\n")
    code, doc = advise(dsn, tmp_path / "out", "--queries", str(path))
    assert code == 0
    return doc


def refusals(doc: dict[str, Any]) -> dict[str, str]:
    return {s["query"]: s["refused"] for s in doc["indexes"]["statements"] if "refused" in s}


def test_a_partitioned_table_gets_its_index_on_the_parent(shapes: str, tmp_path: Path) -> None:
    doc = advise_on(shapes, tmp_path, PARTITIONED)
    assert refusals(doc) == {}
    found = chosen(doc)
    assert set(found) == {"public.events"}
    assert columns(found["public.events"]) == ["account_id"]
    assert " ON public.events USING btree (account_id)" in found["public.events"]["ddl"]
    (served,) = found["public.events"]["statements"]
    assert served["cost_after"] < served["cost_before"]
    # the plan uses each partition's own index, made with the parent's
    assert "events_2024_01_account_id_idx" in " ".join(served["plan_after"])


def test_a_materialized_view_is_copied_with_its_data(shapes: str, tmp_path: Path) -> None:
    doc = advise_on(shapes, tmp_path, MATERIALIZED)
    assert refusals(doc) == {}
    found = chosen(doc)
    assert columns(found["public.posts_materialized"]) == ["id"]
    assert found["public.posts_materialized"]["bytes_on_copy"] > 8192  # rows were there


def test_a_view_gets_its_index_on_the_table_behind_it(shapes: str, tmp_path: Path) -> None:
    doc = advise_on(shapes, tmp_path, VIEW)
    assert refusals(doc) == {}
    found = chosen(doc)
    assert set(found) == {"public.posts"}
    assert columns(found["public.posts"]) == ["author_id"]


def test_quoted_mixed_case_names_are_kept(shapes: str, tmp_path: Path) -> None:
    doc = advise_on(shapes, tmp_path, QUOTED)
    assert refusals(doc) == {}
    found = chosen(doc)
    index = found['"Bar"."Foo"']
    assert index["columns"] == [{"expr": '"Id"', "direction": "asc"}]
    assert index["ddl"].startswith('CREATE INDEX CONCURRENTLY "Foo_Id_idx" ON "Bar"."Foo" ')
    assert '("Id")' in index["ddl"]
    sql = (tmp_path / "out" / "indexes.sql").read_text()
    assert 'ON "Bar"."Foo" USING btree ("Id")' in sql


FOREIGN = """
create extension postgres_fdw;
create server nowhere foreign data wrapper postgres_fdw options (host '127.0.0.1', port '1');
create foreign table remote_posts (id int, title text) server nowhere;
create view mixed as select p.id, p.title, r.title as remote_title
    from posts p join remote_posts r using (id);
"""


def test_one_database_of_every_kind_is_advised_whole(
    binaries: PgBinaries, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pg_stat_statements' workload on every kind at once, a foreign key to a table no
    plan reads, and a foreign table (with a view on it) the copy cannot take: advise
    with its default rules exits 0, advises on each, and says what it left out."""
    with EmbeddedTarget(binaries) as server:
        admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        with shapes_database(admin, FOREIGN) as dsn:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("create extension pg_stat_statements")
                conn.execute("select pg_stat_statements_reset()")
                for i in range(1, 200):
                    for query in (PARTITIONED, VIEW, MATERIALIZED, QUOTED):
                        conn.execute(query.replace("$1", "%s"), (i,))
            out = tmp_path / "out"
            code = main(["advise", "--dsn", dsn, "--sample", "1", "--cover", "100",
                         "--queries", str(_queries(tmp_path)), "--out", str(out)])  # fmt: skip
            assert code == 0, capsys.readouterr().err
            doc = json.loads((out / "advice.json").read_text())
            code = main(["advise", "--dsn", dsn, "--sample", "1", "--cover", "100",
                         "--out", str(tmp_path / "stats")])  # fmt: skip
            assert code == 0, capsys.readouterr().err
            from_stats = json.loads((tmp_path / "stats" / "advice.json").read_text())
    for found in (chosen(doc), chosen(from_stats)):
        assert {"public.events", "public.posts", "public.posts_materialized", '"Bar"."Foo"'} <= set(
            found
        )
    left_out = doc["indexes"]["left_out"]
    assert left_out["public.remote_posts"].startswith("a foreign table")
    assert left_out["public.mixed"] == "needs public.remote_posts, which is left out"
    assert refusals(doc) == {
        "select title from mixed where id = $1": (
            "reads public.mixed, left out of the copy: needs public.remote_posts, which is left out"
        )
    }
    assert "left out" in capsys.readouterr().err


def _queries(tmp_path: Path) -> Path:
    path = tmp_path / "all.sql"
    queries = (PARTITIONED, VIEW, MATERIALIZED, QUOTED, "select title from mixed where id = $1")
    path.write_text(";\n".join(queries) + ";\n")
    return path


def test_ab_table_copies_a_partitioned_table_and_a_materialized_view(
    shapes: str, tmp_path: Path, workdir: Path
) -> None:
    """`--table events --table posts_materialized`: the partitions come with their
    parent (with the accounts their foreign key references), the materialized view
    with the posts it reads, refreshed: the A/B's index on the parent runs on them."""
    folder = tmp_path / "ab"
    folder.mkdir()
    (folder / "read.sql").write_text(
        "\\set a random(1, 2000)\n"
        "select count(*) from events where account_id = :a;\n"
        "select size from posts_materialized where id = :a;\n"
    )
    (folder / "index.sql").write_text(
        "create index on events (account_id);\n"
        "do $$ begin if (select count(*) from posts_materialized) <> 60000 then "
        "raise 'posts_materialized has no rows'; end if; end $$;\n"
    )
    args = ["--source-dsn", shapes, "--table", "events", "--table", "posts_materialized"]
    args += ["--script", str(folder / "read.sql"), "--b-sql", str(folder / "index.sql")]
    code, result = run_ab(workdir, tmp_path / "out", *args, "--reps", "3", "--duration", "1")
    assert code == 0
    assert result["steps"][1]["verdict_vs_previous"] in ("faster", "inconclusive")
