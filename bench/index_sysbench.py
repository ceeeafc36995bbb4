"""The index advisor against a client nobody here wrote: sysbench's tables prepared
without their secondary index on `k`, then sysbench's own workloads run on them
(select_random_points reads by `k`; oltp_update_index sets `k`, so an index on it
costs those updates their HOT path; oltp_insert adds rows), and `pgopt advise
--rule missing-index --prove missing-index` on what pg_stat_statements saw.

    .venv/bin/python bench/index_sysbench.py [--rows 100000] [--seconds 20] [--duration 10]

One throwaway server (stopped and removed at the end, also on Ctrl-C). Prints
advise's summary, then the proof: the set's verdict, each statement's time per
call without and with the index, WAL per transaction; keeps its folder.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg

from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from pgopt.servers.embedded import EmbeddedTarget

TABLES = 2
RAND = "--rand-type=uniform"  # sysbench skews its values by default; the replay tests too
# sysbench workload -> its threads: reads by k, updates of k, inserts
WORKLOADS = {"select_random_points": 1, "oltp_update_index": 1, "oltp_insert": 1}


def sysbench(port: int, database: str, rows: int, *args: str) -> list[str]:
    return [
        "sysbench", "--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={port}",
        "--pgsql-user=postgres", f"--pgsql-db={database}", f"--tables={TABLES}",
        f"--table-size={rows}", *args,
    ]  # fmt: skip


def prepared(admin: str, port: int, rows: int) -> str:
    """A database with sysbench's tables and rows, without the index on k; its DSN."""
    name = f"sb_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    dsn = admin.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create extension pg_stat_statements")
    args = sysbench(port, name, rows, "--create_secondary=off", RAND, "oltp_read_write", "prepare")
    subprocess.run(args, check=True, capture_output=True, timeout=600)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("vacuum analyze")
    return dsn


def run_workload(port: int, dsn: str, rows: int, seconds: int) -> None:
    """sysbench's workloads side by side for `seconds`, pg_stat_statements reset first."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
    name = dsn.rsplit("/", 1)[1]
    procs = [
        subprocess.Popen(
            sysbench(
                port, name, rows, f"--threads={threads}", f"--time={seconds}", workload, "run"
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for workload, threads in WORKLOADS.items()
    ]
    for proc in procs:
        proc.wait(timeout=seconds + 60)


def main() -> int:
    from common import stop_cleanly_on_signals

    from pgopt.cli import main as pgopt

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows per sysbench table")
    parser.add_argument("--seconds", type=int, default=20, help="sysbench's run on the source")
    parser.add_argument("--duration", type=int, default=10, help="each timed run of the proof")
    parser.add_argument("--out", type=Path, default=Path("index-sysbench"))
    args = parser.parse_args()
    if shutil.which("sysbench") is None:
        raise SystemExit("sysbench is not installed (make packages)")
    stop_cleanly_on_signals()
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    folder = args.out.resolve()
    with EmbeddedTarget(binaries) as server:
        admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        dsn = prepared(admin, server.port, args.rows)
        run_workload(server.port, dsn, args.rows, args.seconds)
        code = pgopt(
            [
                "advise", "--dsn", dsn, "--rule", "missing-index", "--sample", "1",
                "--cover", "100", "--prove", "missing-index",
                "--prove-duration", str(args.duration), "--out", str(folder),
                "--copy-rate", "max", "--copy-checkpoint", "fast",  # a throwaway source
            ]
        )  # fmt: skip
    doc = json.loads((folder / "advice.json").read_text())
    proof = doc["indexes"].get("proof")
    if proof:
        print(f"\nthe set: {proof['set']}  (fidelity: {proof['fidelity']})")
        for added in proof["added"]:
            print(f"added: {added['ddl']}: {added['verdict']}")
        print(f"WAL bytes per transaction: {proof['wal_bytes_per_tx']}")
        for e in proof["statements"]:
            query = " ".join(e["query"].split())[:70]
            print(
                f"  {e['statement']:>4} {query:<70} {e['ms_per_call_a']:>8.3f} → "
                f"{e['ms_per_call_b']:>8.3f} ms  ×{e['ratio']:.2f}"
            )
    return code


if __name__ == "__main__":
    sys.exit(main())
