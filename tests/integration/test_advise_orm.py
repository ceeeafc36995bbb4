"""`pgopt advise` on what an ORM sends (Django's shapes), on PostgreSQL 18 (pgopt's
own server, pg_stat_statements) and 15 (Debian's, a `--queries` file; skipped
without it): a queue's `status = $1 ORDER BY created_at LIMIT 1 FOR UPDATE SKIP
LOCKED` on a varchar column gets `(status, created_at)`; a `--queries` file's
example value gets the composite index, not a partial one for that value, while a
constant predicate pg_stat_statements kept gets a partial one; Django's `_like`
index (varchar_pattern_ops) beside the column's unique index, or an index with a
collation of its own, is no duplicate, while a true duplicate still is."""

import contextlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget

from .conftest import LOCAL_DSN, local_server_answers

pytestmark = pytest.mark.xdist_group("pg15")

# Django 5.2's tables: a CharField is varchar; unique=True and db_index=True on a
# CharField make the `_like` index beside the column's own
SCHEMA = """\
create table shop_order (id bigserial primary key, status varchar(20) not null,
                         created_at timestamptz not null, customer_id int not null);
insert into shop_order (status, created_at, customer_id)
  select (array['new', 'paid', 'shipped', 'cancelled'])[i % 4 + 1],
         timestamptz '2026-01-01' + i * interval '1 minute', i % 5000
  from generate_series(1, 200000) i;
create table posts (id bigserial primary key, user_id int not null, blog_id int not null,
                    deleted_at timestamptz, title varchar(200) not null);
insert into posts (user_id, blog_id, deleted_at, title)
  select i % 2000, (i / 2000) % 500,
         case when i % 10 > 0 then timestamptz '2026-01-01' end, format('post %s', i)
  from generate_series(1, 200000) i;
create table shop_user (id bigserial primary key, email varchar(254) not null unique,
                        name varchar(100) not null);
insert into shop_user (email, name)
  select format('user%s@example.com', i), format('name %s', i) from generate_series(1, 2000) i;
create index shop_user_email_like on shop_user (email varchar_pattern_ops);
create index shop_user_name on shop_user (name);
create index shop_user_name_c on shop_user (name collate "C");
create index shop_user_name_again on shop_user (name);
"""
QUEUE = (
    'SELECT "shop_order"."id", "shop_order"."status", "shop_order"."created_at" '
    'FROM "shop_order" WHERE "shop_order"."status" = $1 '
    'ORDER BY "shop_order"."created_at" ASC LIMIT 1 FOR UPDATE SKIP LOCKED'
)
EXAMPLE = "select id, title from posts where user_id = 1 and blog_id = $1"
LIVE = "select id, title from posts where deleted_at is null and blog_id = $1"


@pytest.fixture(scope="module")
def server_18(server: EmbeddedTarget) -> Iterator[str]:
    """A database on pgopt's own PostgreSQL 18, pg_stat_statements in it."""
    admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
    with orm_database(admin, statements=True) as dsn:
        yield dsn


@pytest.fixture(scope="module")
def server_15() -> Iterator[str]:
    if not local_server_answers():
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    with orm_database(LOCAL_DSN, statements=False) as dsn:
        yield dsn


@contextlib.contextmanager
def orm_database(admin: str, *, statements: bool) -> Iterator[str]:
    """A new database on the server at `admin` with the ORM's tables, dropped at the
    end; its DSN."""
    name = f"pgopt_orm_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    dsn = admin.rsplit("/", 1)[0] + f"/{name}"
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            if statements:
                conn.execute("create extension pg_stat_statements")
            conn.execute(SCHEMA)
            conn.execute("vacuum analyze")
        yield dsn
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"drop database if exists {name} with (force)")


def advise(dsn: str, out: Path, *args: str) -> dict[str, Any]:
    code = main(["advise", "--dsn", dsn, "--sample", "1", "--out", str(out), *args])
    assert code == 0
    return dict(json.loads((out / "advice.json").read_text()))


def chosen(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each index to add, by table."""
    found = [f["index"] for f in doc["findings"] if f["rule"] == "missing-index"]
    return {index["table"]: index for index in found}


def columns(index: dict[str, Any]) -> list[str]:
    return [c["expr"] for c in index["columns"]]


@pytest.fixture(params=["18", "15"])
def dsn(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(f"server_{request.param}"))


def test_a_queue_on_a_varchar_and_an_example_value_from_a_queries_file(
    dsn: str, tmp_path: Path
) -> None:
    queries = tmp_path / "queries.sql"
    queries.write_text(f"{QUEUE};\n-- an example user\n{EXAMPLE};\n")
    doc = advise(dsn, tmp_path / "out", "--rule", "missing-index", "--queries", str(queries))
    found = chosen(doc)
    # `(status)::text = $1`: the column, then the sort the limit stops
    assert columns(found["public.shop_order"]) == ["status", "created_at"], found
    assert found["public.shop_order"]["predicate"] is None
    # user_id = 1 is an example of a user (2,000 of them): the composite index
    assert columns(found["public.posts"]) == ["user_id", "blog_id"], found
    assert found["public.posts"]["predicate"] is None
    assert not [c for c in doc["indexes"]["candidates"] if "user_id = 1" in c["ddl"]]


def test_pg_stat_statements_workload_on_18(server_18: str, tmp_path: Path) -> None:
    """The shop's calls as Django sends them (a parameter per value, bound by the
    server): the queue's index; `deleted_at IS NULL`, the same in every call, a
    partial index's predicate."""
    with psycopg.connect(server_18, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
        for i in range(40):
            with conn.transaction():
                conn.execute(QUEUE.replace("$1", "%s"), ("new",))
            conn.execute(LIVE.replace("$1", "%s"), (i,))
    doc = advise(server_18, tmp_path / "out", "--rule", "missing-index", "--cover", "100")
    assert doc["indexes"]["source"] == "pg_stat_statements"
    found = chosen(doc)
    assert columns(found["public.shop_order"]) == ["status", "created_at"], found
    assert columns(found["public.posts"]) == ["blog_id"], found
    assert found["public.posts"]["predicate"] == "deleted_at IS NULL"


def test_a_pattern_ops_index_or_a_collation_of_its_own_is_no_duplicate(
    dsn: str, tmp_path: Path
) -> None:
    doc = advise(dsn, tmp_path / "out", "--rule", "duplicate-index")
    duplicates = [f["message"] for f in doc["findings"] if f["rule"] == "duplicate-index"]
    (duplicate,) = duplicates
    assert duplicate.startswith("public.shop_user_name_again on public.shop_user ("), duplicates
    assert duplicate.endswith("is covered by public.shop_user_name")
