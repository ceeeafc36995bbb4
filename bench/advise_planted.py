"""A database with the seed articles' problems planted, and decoys beside them that
look alike but are fine, under a live pgbench workload; then `pgopt advise` on it.

    .venv/bin/python bench/advise_planted.py [--sample 10] [--prove RULE ...]

One throwaway server (stopped and removed at the end, also on Ctrl-C). It prints
advise's summary and keeps its folder (advice.json, report.md, report.html). The
integration test (tests/integration/test_advise.py) uses the same database.
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
from pgopt.servers.embedded import EmbeddedTarget

PLANTED = """\
create extension pg_stat_statements;
-- a hot sequence without a cache, and a decoy with one
create sequence hot_seq cache 1;
create sequence cached_seq cache 100;
-- a queue whose workers lock the same row (FOR UPDATE), and a decoy with SKIP LOCKED
create table jobs (id int primary key, n int not null default 0);
insert into jobs select i, 0 from generate_series(1, 1000) i;
-- many rows per key scattered over the table, and the same rows in key order
create table events (key int not null, payload text not null);
insert into events select (random() * 1999)::int, repeat('x', 80) from generate_series(1, 200000);
create index events_key on events (key);
create table events_sorted as select * from events order by key;
create index events_sorted_key on events_sorted (key);
-- an index another covers, and a decoy that leads with another column
create table orders (customer int, placed date, total int);
insert into orders select i % 500, date '2026-01-01' + i % 300, i from generate_series(1, 5000) i;
create index orders_customer on orders (customer);
create index orders_customer_placed on orders (customer, placed);
create index orders_placed on orders (placed);
-- short transactions, each waiting on the WAL flush of its commit
create table audit_log (k int not null, at timestamptz not null default now());
-- an index left invalid by a failed CREATE INDEX CONCURRENTLY (see below)
create table tags (name text);
insert into tags values ('a'), ('a');
-- a queue table emptied as fast as it fills: dead rows at its head
create table inbox (id serial primary key, body text) with (autovacuum_enabled = false);
insert into inbox (body) select 'm' from generate_series(1, 20000);
delete from inbox;
create table outbox (id serial primary key, body text);
insert into outbox (body) select 'm' from generate_series(1, 20000);
-- half of a table's rows deleted: pgstattuple measures the waste; and a decoy whose
-- free half is its fillfactor's
create extension pgstattuple;
create table ledger (id int, body text) with (autovacuum_enabled = false);
insert into ledger select i, repeat('x', 100) from generate_series(1, 100000) i;
delete from ledger where id % 2 = 0;
create table roomy (id int, body text) with (fillfactor = 50);
insert into roomy select i, repeat('x', 100) from generate_series(1, 100000) i;
analyze;
"""
WORKLOAD = {
    "seq.sql": "select nextval('hot_seq');\nselect nextval('cached_seq');\n",
    "lock.sql": (
        "begin;\nselect id from jobs order by id limit 1 for update \\gset\n"
        "update jobs set n = n + 1 where id = :id;\ncommit;\n"
    ),
    "skip.sql": (
        "begin;\n\\set j random(2, 1000)\n"
        "select id from jobs where id >= :j order by id limit 1 for update skip locked;\ncommit;\n"
    ),
    "keys.sql": (
        "\\set k random(0, 1999)\nselect count(payload) from events where key = :k;\n"
        "select count(payload) from events_sorted where key = :k;\n"
        "select count(*) from orders where placed = '2026-02-01';\n"
        "insert into orders (customer, total) values (:k, :k);\n"
    ),
    "commits.sql": "\\set k random(1, 1000)\ninsert into audit_log (k) values (:k);\n",
}


def plant(server: EmbeddedTarget) -> str:
    """A new database on `server` holding the planted problems; its DSN."""
    admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
    name = f"shop_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    dsn = admin.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(PLANTED)
        with contextlib.suppress(psycopg.errors.UniqueViolation):
            conn.execute("create unique index concurrently tags_name on tags (name)")
    return dsn


@contextlib.contextmanager
def live_workload(
    binaries: PgBinaries, dsn: str, folder: Path, seconds: int = 40
) -> Iterator[None]:
    """pgbench clients running the workload while advise samples."""
    procs = []
    for file, text in WORKLOAD.items():
        (folder / file).write_text(text)
        # the queue's workers queue on its head row; three autocommit writers keep the
        # WAL flush a large share of the sampled time even when other work loads the CPU
        clients = {"lock.sql": "4", "commits.sql": "3"}.get(file, "1")
        args = [str(binaries.path("pgbench")), "-n", "-c", clients, "-T", str(seconds)]
        procs.append(
            subprocess.Popen(
                [*args, "-f", str(folder / file), dsn],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


def main() -> int:
    from common import stop_cleanly_on_signals

    from pgopt.cli import main as pgopt

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=10, help="seconds advise samples")
    parser.add_argument("--prove", action="append", default=[], metavar="RULE")
    parser.add_argument("--out", type=Path, default=Path("advise-planted"))
    args = parser.parse_args()
    stop_cleanly_on_signals()
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    with EmbeddedTarget(binaries) as server:
        dsn = plant(server)
        folder = args.out.resolve()
        folder.mkdir(parents=True, exist_ok=True)
        seconds = args.sample + 5 + 60 * len(args.prove)
        with live_workload(binaries, dsn, folder, seconds):
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("select pg_stat_statements_reset()")
            proofs = [a for rule in args.prove for a in ("--prove", rule)]
            return pgopt(
                [
                    "advise",
                    "--dsn",
                    dsn,
                    "--sample",
                    str(args.sample),
                    "--out",
                    str(folder / "advice"),
                    *proofs,
                    *(["--copy-rate", "max", "--copy-checkpoint", "fast"] if proofs else []),
                ]
            )


if __name__ == "__main__":
    sys.exit(main())
