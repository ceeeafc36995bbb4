"""Hot rows, as the issue found them: pgbench's TPC-B-like workload at scale 1 with
several clients, whose every transaction updates the one branch row (and one of ten
teller rows); then `pgopt advise` on it, which names the statements waiting, the
table and the statement blocking them.

    .venv/bin/python bench/advise_hot_rows.py [--clients 6] [--sample 10]

One throwaway server (stopped and removed at the end, also on Ctrl-C); advise's
folder is kept (advice.json, report.md, report.html). The integration test
(tests/integration/test_advise.py) runs the same workload.
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


def hot_database(binaries: PgBinaries, server: EmbeddedTarget) -> str:
    """A new database on `server` with pgbench's tables at scale 1; its DSN."""
    name = f"bank_{uuid.uuid4().hex[:8]}"
    with server.connect("postgres") as conn:
        conn.execute(f"create database {name}")
    dsn = f"postgresql://postgres@127.0.0.1:{server.port}/{name}"
    pgbench = str(binaries.path("pgbench"))
    subprocess.run([pgbench, "-i", "-q", "-s", "1", dsn], check=True, capture_output=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create extension if not exists pg_stat_statements")
    return dsn


@contextlib.contextmanager
def tpcb_clients(binaries: PgBinaries, dsn: str, clients: int, seconds: int) -> Iterator[None]:
    """pgbench's TPC-B-like clients running while advise samples."""
    args = [str(binaries.path("pgbench")), "-n", "-c", str(clients), "-T", str(seconds), dsn]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> int:
    from common import stop_cleanly_on_signals

    from pgopt.cli import main as pgopt

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--sample", type=int, default=10, help="seconds advise samples")
    parser.add_argument("--out", type=Path, default=Path("advise-hot-rows"))
    args = parser.parse_args()
    stop_cleanly_on_signals()
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    with EmbeddedTarget(binaries) as server:
        dsn = hot_database(binaries, server)
        with tpcb_clients(binaries, dsn, args.clients, args.sample + 10):
            return pgopt(
                ["advise", "--dsn", dsn, "--sample", str(args.sample), "--out", str(args.out)]
            )


if __name__ == "__main__":
    sys.exit(main())
