"""Harness cost: `pgopt lab run smoke` baseline tps against plain pgbench, same server.

Both run pgbench's TPC-B-like script with 2 clients, 2 threads, for the same
duration, on equal fresh copies of the pgbench tables, alternating A B A B.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

from common import pgopt_run, report, server_dsn

from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, find_binaries
from pgopt.psql import Psql
from pgopt.target.embedded import EmbeddedTarget

TABLES = Path(__file__).resolve().parent.parent / "src/pgopt/labs/smoke/pgbench_tables.sql"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=int, default=20)
    args = parser.parse_args()
    binaries = find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)
    via_pgopt: list[float] = []
    plain: list[float] = []
    with EmbeddedTarget(binaries) as server:
        dsn = server_dsn(server)
        with server.connect("postgres") as conn:
            conn.execute("create database plain")
        env = {**server.client_env(), "PGDATABASE": "plain"}
        for _ in range(args.rounds):
            result = pgopt_run(
                [
                    "smoke",
                    "--dsn",
                    dsn,
                    "--steps",
                    "baseline",
                    "--reps",
                    "1",
                    "--duration",
                    str(args.duration),
                ]
            )
            via_pgopt.append(result["steps"][0]["runs"][0]["tps"])  # type: ignore[index]
            Psql(binaries, env).run_file(TABLES, {"scale_factor": "1"}, what="setup")
            # pgopt warms up for 2 s before its timed run; so does the plain run
            for seconds in (2, args.duration):
                proc = subprocess.run(
                    [
                        str(binaries.path("pgbench")),
                        "-n",
                        "-b",
                        "tpcb-like",
                        "-c",
                        "2",
                        "-j",
                        "2",
                        "-T",
                        str(seconds),
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
            match = re.search(r"tps = ([0-9.]+)", proc.stdout)
            assert match is not None
            plain.append(float(match.group(1)))
    report("pgopt", via_pgopt, "plain pgbench", plain)


if __name__ == "__main__":
    main()
