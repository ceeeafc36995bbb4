"""The keys a watch's clients wrote, read by their rows' xmin (source/written.py) on a
real server: exactly the rows inserted or updated since the watch's start, none of
those before it, a sample of them from a table too big to read whole, and nothing
from what cannot be read so; all in pgopt's read-only session."""

from __future__ import annotations

import psycopg
import pytest

from pgopt.servers import read_only
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.source.written import (
    MAX_PAGES,
    MIN_KEYS,
    KeysUnread,
    pages_on_disk,
    watch_xid,
    written_keys,
)

from .conftest import LOCAL_DSN, local_server_answers, new_database


def test_the_rows_written_since_the_start_give_their_keys_and_no_others(
    server: EmbeddedTarget,
) -> None:
    dsn = new_database(server, "written")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create table t as select g as id, 0 as v from generate_series(1, 20000) g")
        conn.execute("create view w as select * from t")
        conn.execute(
            "create table u with (fillfactor = 50) as "
            "select g as id, 0 as v from generate_series(1, 20000) g"
        )
        conn.execute("vacuum freeze t")  # frozen rows: an xmin older than any watch
        conn.execute("update t set v = 1 where id between 100 and 199")  # before the watch
    with read_only.connect(dsn, "ab") as source:
        since = watch_xid(source)
        with psycopg.connect(dsn, autocommit=True) as clients:
            clients.execute("update t set v = 2 where id between 5000 and 5099")
            for key in (9000, 9001, 9002):  # one transaction each, a hot key among them
                for _ in range(3):
                    clients.execute("update t set v = v + 1 where id = %s", (key,))
            clients.execute("insert into t select g, 3 from generate_series(20001, 20010) g")
            clients.execute("delete from t where id = 5050")  # a key deleted is gone
            clients.execute("update t set v = 4 where id between 7000 and 7004")
            clients.execute("update t set v = 4 where false")
        # a planner's figure of 0 (never analyzed): the size on disk decides the sample
        on_disk = pages_on_disk(source, "public", "t")
        assert 80 < on_disk < MAX_PAGES and pages_on_disk(source, "public", "w") == 0.0
        found = written_keys(source, "public", "t", ["id", "v"], since, pages=0.0)
        assert set(found) == {"id", "v"}  # both columns, of the same rows, in one scan
        keys = found["id"]
        assert keys.pages_read == 1.0
        expected = {*range(5000, 5100), 9000, 9001, 9002, *range(20001, 20011), *range(7000, 7005)}
        expected.discard(5050)
        assert sorted(map(int, keys.values)) == sorted(expected)  # each key once
        assert "117 rows written during the watch" in keys.origin
        assert sorted(set(found["v"].values)) == ["2", "3", "4"]
        # a table of more than MAX_PAGES pages is read in a sample of its pages: here u,
        # whose free space keeps each updated row on its page, read as if 2 x MAX_PAGES
        with psycopg.connect(dsn, autocommit=True) as clients:
            clients.execute("update u set v = 1 where id % 10 = 0")
        sampled = written_keys(source, "public", "u", ["id"], since, pages=MAX_PAGES * 2.0)["id"]
        assert sampled.pages_read == 0.5
        assert 500 <= len(sampled.values) <= 1500, len(sampled.values)
        assert all(int(k) % 10 == 0 for k in sampled.values)
        assert "in a sample of 50% of its pages" in sampled.origin
        # fewer than MIN_KEYS rows written since a later start: none
        later = watch_xid(source)
        with psycopg.connect(dsn, autocommit=True) as clients:
            clients.execute(f"update t set v = 5 where id <= {MIN_KEYS - 1}")
        assert written_keys(source, "public", "t", ["id"], later, pages=90.0) == {}
        # a view has no xmin: not read, and why, and the session goes on
        with pytest.raises(KeysUnread, match="xmin"):
            written_keys(source, "public", "w", ["id"], since, pages=0.0)
        assert written_keys(source, "public", "t", ["id"], since, pages=90.0) != {}
        # a read that runs into the session's statement timeout is said, not taken for
        # "no keys"; a table whose size cannot be read is not read (not read whole)
        source.execute("set statement_timeout = 1")
        with pytest.raises(KeysUnread, match="statement timeout"):
            written_keys(source, "public", "t", ["id"], since, pages=90.0)
        source.execute("reset statement_timeout")
        with pytest.raises(KeysUnread, match="size on disk cannot be read"):
            written_keys(source, "public", "gone", ["id"], since, pages=0.0)


@pytest.mark.xdist_group("pg15")
@pytest.mark.skipif(not local_server_answers(), reason="no PostgreSQL on 127.0.0.1:5432")
def test_postgresql_15_gives_the_keys_written_to_a_partitioned_table() -> None:
    """Debian's PostgreSQL 15: the same functions and a partitioned table's parent read
    whole (each partition's rows carry their own xmin); its own database, dropped."""
    name = "pgopt_written_keys"
    dsn = LOCAL_DSN.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(LOCAL_DSN, autocommit=True) as admin:
        admin.execute(f"drop database if exists {name}")
        admin.execute(f"create database {name}")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("create table p (id int, v int) partition by range (id)")
            conn.execute("create table p1 partition of p for values from (1) to (5001)")
            conn.execute("create table p2 partition of p for values from (5001) to (10001)")
            conn.execute("insert into p select g, 0 from generate_series(1, 10000) g")
            conn.execute("vacuum freeze p")
        with read_only.connect(dsn, "ab") as source:
            assert source.info.server_version // 10000 == 15
            since = watch_xid(source)
            with psycopg.connect(dsn, autocommit=True) as clients:
                clients.execute("update p set v = 1 where id between 4990 and 5020")
            assert pages_on_disk(source, "public", "p") >= 40  # its partitions' pages
            keys = written_keys(source, "public", "p", ["id"], since, pages=0.0)["id"]
            assert sorted(map(int, keys.values)) == list(range(4990, 5021))
    finally:
        with psycopg.connect(LOCAL_DSN, autocommit=True) as admin:
            admin.execute(f"drop database if exists {name} with (force)")


def test_a_read_only_session_keeps_the_users_own_options(server: EmbeddedTarget) -> None:
    """The one door to a user's server (servers/read_only.py) keeps the DSN's `options`
    and adds pgopt's after them."""
    dsn = new_database(server, "options") + "?options=-c%20search_path%3Dapp%2Cpublic"
    with read_only.connect(dsn, "advise") as conn:
        assert conn.execute("show search_path").fetchone() == ("app,public",)
        assert conn.execute("show default_transaction_read_only").fetchone() == ("on",)
