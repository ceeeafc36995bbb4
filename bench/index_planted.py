"""A database with missing indexes planted, and decoys beside them, its workload run
so pg_stat_statements holds it; then `pgopt advise --rule missing-index` on it.

    .venv/bin/python bench/index_planted.py [--dsn postgresql://...] [--prove]

Planted: an equality lookup, equality plus a range, a sort under a LIMIT, a join
key, a case-insensitive lookup on lower(email), and (in a --queries file, since
pg_stat_statements replaces constants) a constant predicate for a partial index.
Decoys: a table small enough that a sequential scan wins, a column of three
values, a lookup an existing two-column index covers, and a write-heavy table
whose rare read an index would speed up at a greater cost to its inserts.

Without --dsn, one throwaway server (stopped and removed at the end, also on
Ctrl-C); with --dsn (a server with pg_stat_statements preloaded, e.g. Debian's
PostgreSQL 15), a new database there, dropped at the end. The integration test
(tests/integration/test_index_advisor.py) uses the same database.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg

from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, PgBinaries, find_binaries

PLANTED = """\
create table customers (id int primary key, email text not null, name text not null);
insert into customers
  select i, format('user%s@example.com', i), format('name %s', i)
  from generate_series(1, 40000) i;
create table orders (id int primary key, customer_id int not null, placed_at timestamptz not null,
                     status text not null, total int not null);
insert into orders
  select i, i % 40000 + 1, timestamptz '2026-01-01' + i * interval '1 minute',
         (array['new', 'paid', 'sent'])[i % 3 + 1], i % 1000
  from generate_series(1, 120000) i;
create table events (id int primary key, account_id int not null, happened_at timestamptz not null,
                     body text not null);
insert into events
  select i, i % 2000, timestamptz '2026-01-01' + i * interval '1 minute', repeat('e', 40)
  from generate_series(1, 120000) i;
create table articles (id int primary key, title text not null, published_at timestamptz not null,
                       body text not null);
insert into articles
  select i, format('title %s', i),
         timestamptz '2026-01-01' + (i * 7919 % 100000) * interval '1 minute', repeat('a', 60)
  from generate_series(1, 100000) i;
create table products (id int primary key, sku text not null unique);
insert into products select i, format('SKU-%s', i) from generate_series(1, 2000) i;
create table line_items (id int primary key, product_id int not null, qty int not null);
insert into line_items select i, i % 2000 + 1, i % 7 from generate_series(1, 150000) i;
create table tasks (id int primary key, queue text not null, status text not null);
insert into tasks
  select i, format('q%s', i % 50), case when i % 200 = 0 then 'pending' else 'done' end
  from generate_series(1, 100000) i;
-- decoys
create table settings (key text not null, value text not null);
insert into settings select format('k%s', i), 'v' from generate_series(1, 20) i;
create table shipments (id int primary key, carrier_id int not null, shipped_at date not null);
insert into shipments
  select i, i % 300, date '2026-01-01' + i % 365 from generate_series(1, 60000) i;
create index shipments_carrier_shipped on shipments (carrier_id, shipped_at);
create table audit (id bigserial primary key, actor int not null,
                    at timestamptz not null default now());
insert into audit (actor) select i % 5000 from generate_series(1, 3000) i;
"""
# pgbench scripts and how many times each runs: the counts make the weights (a text
# value is made by a query and \gset, so the statement compares a column with $1)
WORKLOAD = {
    "lookup.sql": ("\\set c random(1, 40000)\nselect * from orders where customer_id = :c;\n", 150),
    "range.sql": (
        "\\set a random(0, 1999)\nselect id, body from events where account_id = :a "
        "and happened_at >= '2026-03-01';\n",
        150,
    ),
    "latest.sql": ("select id, title from articles order by published_at desc limit 10;\n", 150),
    "join.sql": (
        "\\set p random(1, 2000)\nselect format('SKU-%s', :p::int) as sku \\gset\n"
        "select sum(li.qty) from line_items li "
        "join products p on p.id = li.product_id where p.sku = :sku;\n",
        150,
    ),
    "email.sql": (
        "\\set c random(1, 40000)\nselect format('user%s@example.com', :c::int) as e \\gset\n"
        "select id, name from customers where lower(email) = :e;\n",
        150,
    ),
    "small.sql": (
        "\\set k random(1, 20)\nselect format('k%s', :k::int) as key \\gset\n"
        "select value from settings where key = :key;\n",
        300,
    ),
    "status.sql": ("select count(*) from orders where status = 'paid';\n", 30),
    "covered.sql": (
        "\\set c random(0, 299)\nselect count(*) from shipments where carrier_id = :c;\n",
        150,
    ),
    "audit_write.sql": ("\\set a random(0, 4999)\ninsert into audit (actor) values (:a);\n", 6000),
    "audit_read.sql": ("\\set a random(0, 4999)\nselect * from audit where actor = :a;\n", 6),
}
# what pg_stat_statements cannot show: constants (a partial index's predicate)
QUERIES = """\
-- the pending tasks of a queue: 0.5% of the rows
select id from tasks where status = 'pending' and queue = $1;
select id from orders where customer_id = $1;
-- a name containing a string: a trigram index (pg_trgm is installed here)
select id from customers where name like '%7531%'
"""


def plant(admin_dsn: str) -> str:
    """A new database on the server at `admin_dsn` holding the planted tables; its DSN."""
    name = f"pgopt_idx_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    dsn = admin_dsn.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        preloaded = conn.execute("show shared_preload_libraries").fetchone()
        if preloaded and "pg_stat_statements" in str(preloaded[0]):
            conn.execute("create extension pg_stat_statements")
        conn.execute("create extension if not exists pg_trgm")
        conn.execute(PLANTED)
        conn.execute("vacuum analyze")
    return dsn


def drop(admin_dsn: str, dsn: str) -> None:
    name = dsn.rsplit("/", 1)[1]
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f"drop database if exists {name} with (force)")


def run_workload(
    binaries: PgBinaries, dsn: str, folder: Path, workload: dict[str, tuple[str, int]]
) -> None:
    """Every script its number of times (one client), so pg_stat_statements has it."""
    if not workload:
        return
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
    pgbench = str(binaries.path("pgbench"))
    for file, (text, times) in workload.items():
        (folder / file).write_text(text)
        subprocess.run(
            # extended: a text value set by \\gset is sent as a parameter
            [pgbench, "-n", "-M", "extended", "-t", str(times), "-f", str(folder / file), dsn],
            check=True,
            capture_output=True,
        )


@contextlib.contextmanager
def planted_database(
    binaries: PgBinaries,
    admin_dsn: str,
    folder: Path,
    workload: dict[str, tuple[str, int]] | None = None,
) -> Iterator[str]:
    """A planted database on the server at `admin_dsn`, its `workload` (all of it by
    default; {}: none) run; dropped at the end."""
    dsn = plant(admin_dsn)
    try:
        run_workload(binaries, dsn, folder, WORKLOAD if workload is None else workload)
        yield dsn
    finally:
        drop(admin_dsn, dsn)


def main() -> int:
    from common import stop_cleanly_on_signals

    from pgopt.cli import main as pgopt
    from pgopt.servers.embedded import EmbeddedTarget

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", help="a server to plant in (its postgres database)")
    parser.add_argument("--prove", action="store_true", help="measure the chosen indexes")
    parser.add_argument("--out", type=Path, default=Path("index-planted"))
    args = parser.parse_args()
    stop_cleanly_on_signals()
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    folder = args.out.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queries.sql").write_text(QUERIES)
    with contextlib.ExitStack() as stack:
        admin = args.dsn
        if admin is None:
            server = stack.enter_context(EmbeddedTarget(binaries))
            admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        dsn = stack.enter_context(planted_database(binaries, admin, folder))
        code = pgopt(
            [
                "advise",
                "--dsn",
                dsn,
                "--cover",
                "100",
                "--rule",
                "missing-index",
                "--sample",
                "1",
                "--out",
                str(folder / "advice"),
                *(["--prove", "missing-index"] if args.prove else []),
                *(["--copy-rate", "max", "--copy-checkpoint", "fast"] if args.prove else []),
            ]
        )
        pgopt(
            [
                "advise",
                "--dsn",
                dsn,
                "--rule",
                "missing-index",
                "--sample",
                "1",
                "--queries",
                str(folder / "queries.sql"),
                "--out",
                str(folder / "advice-queries"),
            ]
        )
        return code


if __name__ == "__main__":
    sys.exit(main())
