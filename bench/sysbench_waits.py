"""Where sysbench's own sessions spend their time, A (synchronous_commit = on) and B
(off): the application side of replay_truth.py's comparison, for reading beside a
replay's wait shares in its report.

On one throwaway PostgreSQL 18, sysbench's `oltp_read_write` (4 tables of 100,000
rows) runs `--runs` times for `--seconds` each, alternating A and B from A, a
CHECKPOINT before each as replay_truth.py does; its sessions are sampled every 10 ms
from pg_stat_activity (state and wait event; CPU where none). Prints each run's
transactions a second, its deadlocks (pg_stat_database), its WAL and full-page images
a transaction (pg_stat_wal), the autovacuums it met, and its eight largest shares.
Run from the repository root:

    .venv/bin/python bench/sysbench_waits.py [--runs 3] [--seconds 8] [--threads 4]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import time
from collections import Counter

import psycopg
from common import stop_cleanly_on_signals

from pgopt.binaries import find_binaries
from pgopt.servers.embedded import EmbeddedTarget

SAMPLE = """
select state, coalesce(wait_event_type || ':' || wait_event, 'CPU')
from pg_stat_activity
where datname = current_database() and pid <> pg_backend_pid()
  and backend_type = 'client backend'
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    stop_cleanly_on_signals()
    with EmbeddedTarget(find_binaries(None)) as server:
        admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        dsn = admin.rsplit("/", 1)[0] + "/app"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("create database app")
        sysbench = [
            "sysbench", "--db-driver=pgsql", "--pgsql-host=127.0.0.1",
            f"--pgsql-port={server.port}", "--pgsql-user=postgres", "--pgsql-db=app",
            "--tables=4", "--table-size=100000", "oltp_read_write",
        ]  # fmt: skip
        subprocess.run([*sysbench, "prepare"], check=True, capture_output=True)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("vacuum analyze")
        for run in range(args.runs):
            arm, sync = ("A", "on") if run % 2 == 0 else ("B", "off")
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f"alter system set synchronous_commit = {sync}")  # type: ignore[arg-type]
                conn.execute("select pg_reload_conf()")
                conn.execute("checkpoint")
            shares, rate, counted = _sampled(dsn, sysbench, args)
            top = ", ".join(f"{k} {v:.0%}" for k, v in shares.most_common(8))
            done = rate * args.seconds or 1.0
            print(
                f"{arm}: {rate:,.0f} transactions a second, {counted['deadlocks']} deadlocks, "
                f"{counted['wal_bytes'] / done:,.0f} bytes and {counted['wal_fpi'] / done:.2f} "
                f"full-page images of WAL a transaction, {counted['autovacuums']} "
                f"autovacuums; {top}"
            )


def _sampled(
    dsn: str, sysbench: list[str], args: argparse.Namespace
) -> tuple[Counter[str], float, dict[str, int]]:
    """One run of sysbench, its sessions sampled: their shares, its rate, and what the
    server counted over it (COUNTERS)."""
    counts: Counter[str] = Counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        before = _counters(conn)
        run = [*sysbench, "run", f"--threads={args.threads}", f"--time={args.seconds}"]
        client = subprocess.Popen(run, stdout=subprocess.PIPE, text=True)
        time.sleep(1)  # its connections made
        while client.poll() is None:
            for state, wait in conn.execute(SAMPLE):
                counts[f"{state} {wait}"] += 1
            time.sleep(0.01)
        after = _counters(conn)
    out = client.stdout.read() if client.stdout else ""
    found = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", out)
    total = sum(counts.values()) or 1
    shares = Counter({k: v / total for k, v in counts.items()})
    counted = {k: after[k] - before[k] for k in after}
    return shares, float(found.group(1)) if found else 0.0, counted


COUNTERS = """
select (select deadlocks from pg_stat_database where datname = current_database()),
       (select wal_bytes from pg_stat_wal), (select wal_fpi from pg_stat_wal),
       (select sum(autovacuum_count + autoanalyze_count) from pg_stat_user_tables)
"""


def _counters(conn: psycopg.Connection[tuple[object, ...]]) -> dict[str, int]:
    row = conn.execute(COUNTERS).fetchone() or (0, 0, 0, 0)
    names = ("deadlocks", "wal_bytes", "wal_fpi", "autovacuums")
    return {name: int(str(value or 0)) for name, value in zip(names, row, strict=True)}


if __name__ == "__main__":
    main()
