"""`pgopt ab` wall time against the size of the user's database: where the time goes
(the copy, restoring it, building each variant, preparing each run, measuring) and
how far `--dry-run`'s estimate was from it.

For each size, a source database is made by a real client, `pgbench -i` (its
accounts table and primary key: about 15.6 MB a scale unit), on the server of
`--source-dsn` (by default the local PostgreSQL on 127.0.0.1:5432). Then, for a
workload that reads (one account by its key) and one that writes (one account's
balance updated), with B adding an index on the balance (so A and B each get a
template):

1. `pgopt ab ... --dry-run`: the estimate, from the source's size;
2. `pgopt ab ...`: the run, and its result.json's `time`.

Prints one row per size and workload; `--json FILE` keeps them. The source
databases are dropped at the end, also on Ctrl-C. Run from the repository root:

    .venv/bin/python bench/ab_scale.py [--sizes 100MB,1GB,5GB] [--reps 3] [--duration 10]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from common import stop_cleanly_on_signals

from pgopt.binaries import find_binaries

BYTES_PER_SCALE = 15.6e6  # pgbench -i: accounts, branches, tellers and their keys
WORKLOADS = {
    "read": "\\set aid random(1, 100000 * :scale)\n"
    "select abalance from pgbench_accounts where aid = :aid;\n",
    "write": "\\set aid random(1, 100000 * :scale)\n\\set delta random(-5000, 5000)\n"
    "update pgbench_accounts set abalance = abalance + :delta where aid = :aid;\n",
}
B_SQL = "create index on pgbench_accounts (abalance);\n"
UNITS = {"MB": 1e6, "GB": 1e9}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100MB,1GB,5GB")
    parser.add_argument("--workloads", default="read,write")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--source-dsn", default="host=127.0.0.1 user=postgres dbname=postgres")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    stop_cleanly_on_signals()
    rows: list[dict[str, Any]] = []
    made: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="pgopt-ab-scale-") as tmp:
            folder = Path(tmp)
            (folder / "b.sql").write_text(B_SQL)
            for size in args.sizes.split(","):
                scale = max(1, round(_bytes(size) / BYTES_PER_SCALE))
                dbname = f"pgopt_ab_scale_{scale}"
                made.append(dbname)
                source = _make_source(args.source_dsn, dbname, scale)
                for workload in args.workloads.split(","):
                    script = folder / f"{workload}.sql"
                    script.write_text(WORKLOADS[workload].replace(":scale", str(scale)))
                    row = _measure(source, script, folder, args)
                    row.update(size=size, scale=scale, workload=workload)
                    rows.append(row)
                    _print_row(row)
    finally:
        _drop_sources(args.source_dsn, made)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


def _bytes(size: str) -> float:
    match = re.fullmatch(r"([\d.]+)\s*(MB|GB)", size.strip(), re.IGNORECASE)
    if match is None:
        raise SystemExit(f"--sizes: {size!r} is not like 100MB or 5GB")
    return float(match.group(1)) * UNITS[match.group(2).upper()]


def _make_source(admin_dsn: str, dbname: str, scale: int) -> str:
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f"drop database if exists {dbname}")
        conn.execute(f"create database {dbname}")
    source = re.sub(r"dbname=\S+", f"dbname={dbname}", admin_dsn)
    pgbench = find_binaries(None).path("pgbench")
    started = time.monotonic()
    subprocess.run(
        [str(pgbench), "-i", "-q", "-s", str(scale), "--dbname", source],
        check=True,
        capture_output=True,
    )
    with psycopg.connect(source) as conn:
        row = conn.execute("select pg_database_size(current_database())").fetchone()
    size = int(row[0]) if row else 0
    print(
        f"source {dbname}: pgbench -i -s {scale}, {size / 1e9:.2f} GB "
        f"in {time.monotonic() - started:.0f}s",
        file=sys.stderr,
    )
    return source


def _measure(source: str, script: Path, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        str(Path(sys.executable).parent / "pgopt"),
        "ab",
        "--source-dsn",
        source,
        "--script",
        str(script),
        "--b-sql",
        str(folder / "b.sql"),
        "--reps",
        str(args.reps),
        "--duration",
        str(args.duration),
    ]
    dry = subprocess.run([*command, "--dry-run"], capture_output=True, text=True, check=True)
    estimate = _estimate_s(dry.stdout)
    out = folder / f"run-{script.stem}-{time.monotonic_ns()}"
    started = time.monotonic()
    subprocess.run([*command, "--out", str(out)], check=True, capture_output=True, text=True)
    wall = time.monotonic() - started
    spent = json.loads((out / "result.json").read_text())["time"]
    return {
        "estimate_s": estimate,
        "estimate_text": _time_line(dry.stdout),
        "wall_s": round(wall, 1),
        **{k: v for k, v in spent.items() if k != "templates"},
        "templates": [(t["steps"], t["build_s"], t["bytes"]) for t in spent["templates"]],
    }


def _time_line(text: str) -> str:
    return next((ln for ln in text.splitlines() if ln.startswith("time: ")), "")


def _estimate_s(text: str) -> float:
    """The seconds of the dry run's 'time: about 12 minutes (...)'."""
    match = re.search(r"time: about (\d+ h \d+ min|\d+ minutes?|\d+ s)", text)
    if match is None:
        raise SystemExit(f"no estimate in the dry run:\n{text}")
    words = match.group(1)
    if "h" in words.split():
        hours, minutes = re.findall(r"\d+", words)
        return int(hours) * 3600 + int(minutes) * 60
    number = int(re.findall(r"\d+", words)[0])
    return number * 60 if "minute" in words else number


def _print_row(row: dict[str, Any]) -> None:
    print(
        f"{row['size']:>6} {row['workload']:<5} from {row['runs_from']:<8} "
        f"total {row['total_s']:7.1f}s (wall {row['wall_s']:.1f}s) | copy {row['copy_s']:.1f}s "
        f"restore {row['setup_s']:.1f}s build {row['build_s']:.1f}s "
        f"prepare {row['prepare_per_run_s']:.2f}s/run measure {row['measure_s']:.1f}s "
        f"({row['measured_share']:.0%}) | estimate {row['estimate_s']:.0f}s "
        f"({row['estimate_s'] / row['total_s']:.2f} of actual)",
        flush=True,
    )


def _drop_sources(admin_dsn: str, names: list[str]) -> None:
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        for name in names:
            conn.execute(f"drop database if exists {name} with (force)")


if __name__ == "__main__":
    sys.exit(main())
