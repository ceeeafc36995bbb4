"""Will upgrading help? sysbench's own workload (a client nobody here wrote) on a
PostgreSQL 15 server, then `pgopt ab --synthesize` across versions: the same data,
dumped by 15's pg_dump, and the replay of what pg_stat_statements saw, on a
throwaway PostgreSQL 15 (A) and 18 (B).

    .venv/bin/python bench/upgrade_sysbench.py [--rows 100000] [--seconds 20] [--duration 10]

The source is a throwaway PostgreSQL 15 of pgopt's (Debian's binaries, with
pg_stat_statements), stopped and removed at the end, also on Ctrl-C; so are the
A/B's two servers. Prints pgopt ab's summary and keeps its folder.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
from index_sysbench import RAND, sysbench

from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from pgopt.servers.embedded import EmbeddedTarget

PG15_BIN = "/usr/lib/postgresql/15/bin"
WORKLOAD = "oltp_read_write"  # sysbench's standard mix: point reads, ranges, updates, a delete
THREADS = 2
WATCH_S = 10  # pgopt ab's --source-sample


def source(server: EmbeddedTarget, rows: int) -> str:
    """sysbench's tables on `server`, statements counted from a reset; its DSN."""
    name = f"sb_{uuid.uuid4().hex[:8]}"
    admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    dsn = admin.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create extension pg_stat_statements")
    prepare = sysbench(server.port, name, rows, RAND, WORKLOAD, "prepare")
    subprocess.run(prepare, check=True, capture_output=True, timeout=600)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("vacuum analyze")
        conn.execute("select pg_stat_statements_reset()")
    return dsn


@contextlib.contextmanager
def running(port: int, dsn: str, rows: int, seconds: float) -> Iterator[None]:
    """sysbench's workload running for `seconds` from now; stopped at the latest when
    the block ends."""
    name = dsn.rsplit("/", 1)[1]
    args = sysbench(port, name, rows, RAND, f"--threads={THREADS}", f"--time={seconds:.0f}")
    proc = subprocess.Popen(
        [*args, WORKLOAD, "run"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> int:
    from common import stop_cleanly_on_signals

    from pgopt.cli import main as pgopt

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows per sysbench table")
    parser.add_argument("--seconds", type=int, default=20, help="sysbench's run on the source")
    parser.add_argument("--duration", type=int, default=10, help="each timed run of the A/B")
    parser.add_argument("--out", type=Path, default=Path("upgrade-sysbench"))
    args = parser.parse_args()
    if shutil.which("sysbench") is None:
        raise SystemExit("sysbench is not installed (make packages)")
    if not Path(PG15_BIN, "postgres").exists():
        raise SystemExit(f"no PostgreSQL 15 in {PG15_BIN}")
    stop_cleanly_on_signals()
    old = find_binaries(PG15_BIN, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    new = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    with EmbeddedTarget(old) as server:
        dsn = source(server, args.rows)
        # sysbench runs on while pgopt reads pg_stat_statements and watches the source
        # (its transactions, sessions), and ends before the A/B's first timed run
        with running(server.port, dsn, args.rows, args.seconds + WATCH_S + 2):
            time.sleep(args.seconds)
            return pgopt(
                [
                    "ab", "--source-dsn", dsn, "--synthesize", "--cover", "100",
                    "--source-sample", str(WATCH_S),
                    "--a-pg-bin", str(old.bindir), "--b-pg-bin", str(new.bindir),
                    "--duration", str(args.duration), "--out", str(args.out.resolve()),
                ]
            )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
