"""`pgopt advise --rule missing-index` on a wide workload: one table of a hundred
integer columns, a hundred statements each filtering one of them by equality; what
it advises, and how long it takes.

    .venv/bin/python bench/advise_scale.py [--rows 20000] [--columns 100] [--dsn ...]

The statements go in a `--queries` file (pg_stat_statements would keep only the
heaviest, MAX_STATEMENTS); each column has about a thousand values, so every
statement wants the index on its own column, and only that one. Without --dsn,
one throwaway server (stopped and removed at the end, also on Ctrl-C); with
--dsn, a new database there, dropped at the end. The integration test
(tests/integration/test_advise_scale.py) uses the same database.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg

from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries


def table_sql(columns: int, rows: int) -> str:
    """`wide`: an id and `columns` integer columns c1.., each of about 1,000 values."""
    names = ", ".join(f"c{k} int not null" for k in range(1, columns + 1))
    values = ", ".join(f"(i * {2 * k + 1}) % {1000 + k}" for k in range(1, columns + 1))
    return (
        f"create table wide (id int primary key, {names});\n"
        f"insert into wide select i, {values} from generate_series(1, {rows}) i;\n"
    )


def queries(columns: int, select: str = "*") -> str:
    """One statement a column: `select * from wide where cK = $1` (`select`: what
    it reads, `{c}` its column)."""
    return "".join(
        f"select {select.format(c=f'c{k}')} from wide where c{k} = $1;\n"
        for k in range(1, columns + 1)
    )


@contextlib.contextmanager
def wide_database(admin_dsn: str, columns: int, rows: int) -> Iterator[str]:
    """A new database on the server at `admin_dsn` holding `wide`; its DSN; dropped
    at the end."""
    name = f"pgopt_wide_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    dsn = admin_dsn.rsplit("/", 1)[0] + f"/{name}"
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(table_sql(columns, rows))
            conn.execute("vacuum analyze wide")
        yield dsn
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f"drop database if exists {name} with (force)")


def main() -> int:
    from common import stop_cleanly_on_signals

    from pgopt.servers.embedded import EmbeddedTarget

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", help="a server to make the table on (its postgres database)")
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--select", default="*", help="what each statement reads ({c}: its column)")
    parser.add_argument("--timeout", type=float, default=900, help="stop advise after S s")
    parser.add_argument("--out", type=Path, default=Path("advise-scale"))
    args = parser.parse_args()
    stop_cleanly_on_signals()
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    folder = args.out.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queries.sql").write_text(queries(args.columns, args.select))
    with contextlib.ExitStack() as stack:
        admin = args.dsn
        if admin is None:
            server = stack.enter_context(EmbeddedTarget(binaries))
            admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        dsn = stack.enter_context(wide_database(admin, args.columns, args.rows))
        command = [sys.executable, "-m", "pgopt", "advise", "--dsn", dsn, "--rule",
                   "missing-index", "--sample", "1", "--queries", str(folder / "queries.sql"),
                   "--out", str(folder / "advice")]  # fmt: skip
        started = time.monotonic()
        try:
            proc = subprocess.run(command, timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            print(f"advise: still running after {args.timeout:.0f} s, stopped")
            return 1
        elapsed = time.monotonic() - started
    if proc.returncode != 0:
        print(f"advise: exit {proc.returncode} after {elapsed:.1f} s")
        return 1
    doc = json.loads((folder / "advice" / "advice.json").read_text())
    found = [f["index"] for f in doc["findings"] if f["rule"] == "missing-index"]
    single = [i for i in found if len(i["columns"]) == 1 and not i["include"]]
    print(
        f"{args.columns} statements on {args.columns} columns, {args.rows} rows: "
        f"{len(found)} indexes advised ({len(single)} of one column, no INCLUDE) "
        f"in {elapsed:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
