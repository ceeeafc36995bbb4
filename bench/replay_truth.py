"""Replay truth: does `pgopt ab --synthesize` reach the verdict the application itself
would? sysbench (a client nobody here wrote) is the application.

For each case (a sysbench workload and one change), on one throwaway PostgreSQL 18:

1. **truth**: sysbench itself measures A and B on the source, in `--rounds` rounds of
   a random order each (the change applied before B's run and undone after), and
   pgopt's own paired rule (analysis/verdicts.py) judges the ratio;
2. **pg_stat_statements**: while sysbench runs, `pgopt ab --source-dsn ... --synthesize`
   samples the source and replays what pg_stat_statements saw, A against B;
3. **log capture**: sysbench runs with `log_min_duration_statement = 0`; that stretch
   of the server's log goes to `pgopt ab ... --source-log`; the capture's cost to the
   source (sysbench's tps with the log against without, in the same rounds) is printed.

Prints, per case and source, both ratios with their 95% intervals, both verdicts, the
replay's fidelity and whether the directions agree (the A/A must never be called
faster or slower); `--json FILE` keeps them. Run from the repository root:

    .venv/bin/python bench/replay_truth.py [--cases aa,sync_rw,...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from common import stop_cleanly_on_signals

from pgopt.analysis.verdicts import Rule, paired, verdict
from pgopt.binaries import find_binaries
from pgopt.servers.embedded import EmbeddedTarget


@dataclass(frozen=True)
class Case:
    name: str
    workload: str
    change: str  # what B is, in words
    settings: tuple[str, ...] = ()  # B's NAME=VALUE
    b_sql: tuple[str, ...] = ()  # B's SQL, on the source (truth) and on B's copy (pgopt)
    undo_sql: tuple[str, ...] = ()  # back to A on the source
    secondary: bool = True  # sysbench's index on k, made at prepare


def _each(template: str, tables: int) -> tuple[str, ...]:
    return tuple(template.format(n=n) for n in range(1, tables + 1))


def cases(tables: int) -> list[Case]:
    return [
        Case("aa", "oltp_read_only", "A/A (work_mem = 4MB, its default)", ("work_mem=4MB",)),
        Case("sync_rw", "oltp_read_write", "synchronous_commit = off", ("synchronous_commit=off",)),
        Case("sync_wo", "oltp_write_only", "synchronous_commit = off", ("synchronous_commit=off",)),
        Case(
            "drop_index",
            "oltp_update_index",
            "drop the index on k that every UPDATE maintains",
            b_sql=_each("drop index k_{n}", tables),
            undo_sql=_each("create index k_{n} on sbtest{n}(k)", tables),
        ),
        Case(
            "add_index",
            "select_random_ranges",
            "add the index on k its ranges need",
            b_sql=_each("create index k_{n} on sbtest{n}(k)", tables),
            undo_sql=_each("drop index k_{n}", tables),
            secondary=False,
        ),
    ]


class Source:
    """The source server and sysbench's database on it."""

    def __init__(self, server: EmbeddedTarget, args: argparse.Namespace) -> None:
        self.server, self.args = server, args
        self.admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        self.dsn = f"postgresql://postgres@127.0.0.1:{server.port}/sb"

    def sysbench(self, workload: str, command: str, *options: str) -> list[str]:
        a = self.args
        return [
            "sysbench",
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            f"--pgsql-port={self.server.port}",
            "--pgsql-user=postgres",
            "--pgsql-db=sb",
            f"--tables={a.tables}",
            f"--table-size={a.table_size}",
            *options,
            workload,
            command,
        ]

    def prepare(self, case: Case) -> None:
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute("drop database if exists sb")
            conn.execute("create database sb")
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("create extension pg_stat_statements")
        secondary = f"--create_secondary={'on' if case.secondary else 'off'}"
        # select_random_ranges has no prepare of its own: oltp_common's tables serve it
        args = self.sysbench("oltp_read_write", "prepare", secondary)
        subprocess.run(args, check=True, capture_output=True)
        self.sql("vacuum analyze")

    def sql(self, *statements: str) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type]

    def settings(self, items: tuple[str, ...], reset: bool = False) -> None:
        with psycopg.connect(self.admin, autocommit=True) as conn:
            for item in items:
                name, _, value = item.partition("=")
                if reset:
                    conn.execute(f"alter system reset {name}")  # type: ignore[arg-type]
                else:
                    conn.execute(f"alter system set {name} = '{value}'")  # type: ignore[arg-type]
            conn.execute("select pg_reload_conf()")

    def run(self, workload: str, seconds: float) -> float:
        """sysbench's transactions per second over `seconds`."""
        extra = (f"--threads={self.args.threads}", f"--time={int(seconds)}")
        out = subprocess.run(
            self.sysbench(workload, "run", *extra), check=True, capture_output=True, text=True
        ).stdout
        match = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", out)
        if match is None:
            raise SystemExit(f"sysbench printed no transactions:\n{out}")
        return float(match.group(1))

    def measured(self, case: Case, variant: str) -> float:
        self.sql("checkpoint")
        if variant == "b":
            self.settings(case.settings)
            self.sql(*case.b_sql)
        try:
            return self.run(case.workload, self.args.seconds)
        finally:
            if variant == "b":
                self.settings(case.settings, reset=True)
                self.sql(*case.undo_sql)


def _judged(a: list[float], b: list[float]) -> dict[str, Any]:
    e = paired(a, b)
    return {
        "ratio": e.ratio,
        "ci95": list(e.ci95),
        "rounds": e.rounds,
        "verdict": str(verdict(e, higher_is_better=True, rule=Rule())),
    }


def truth(source: Source, case: Case, rng: random.Random) -> dict[str, Any]:
    """sysbench's own A/B, and what the log capture costs it (A with the log on)."""
    runs: dict[str, list[float]] = {"a": [], "b": [], "logged": []}
    for _ in range(source.args.rounds):
        for variant in rng.sample(list(runs), len(runs)):
            if variant == "logged":
                source.settings(("log_min_duration_statement=0",))
                try:
                    runs[variant].append(source.measured(case, "a"))
                finally:
                    source.settings(("log_min_duration_statement=0",), reset=True)
            else:
                runs[variant].append(source.measured(case, variant))
    return {
        **_judged(runs["a"], runs["b"]),
        "runs": runs,
        "log_cost": _judged(runs["a"], runs["logged"]),
    }


def pgopt_ab(source: Source, case: Case, log: Path | None, out: Path) -> dict[str, Any]:
    """pgopt ab on the source's workload: sampled while sysbench runs, or from `log`."""
    a = source.args
    source.sql("select pg_stat_statements_reset()")
    command = [sys.executable, "-m", "pgopt", "ab", "--source-dsn", source.dsn, "--synthesize"]
    for item in case.settings:
        command += ["--b-setting", item]
    if case.b_sql:
        b_sql = out.with_name(f"{case.name}-b.sql")
        b_sql.write_text("".join(f"{statement};\n" for statement in case.b_sql))
        command += ["--b-sql", str(b_sql)]
    command += ["--reps", str(a.rounds), "--duration", str(a.seconds), "--out", str(out)]
    if log is not None:
        _capture(source, case, log)
        command += ["--source-log", str(log), "--source-sample", "0"]
        proc = subprocess.run(command, capture_output=True, text=True)
    else:
        client = subprocess.Popen(
            source.sysbench(
                case.workload, "run", f"--threads={a.threads}", f"--time={a.sample + 3}"
            ),
            stdout=subprocess.DEVNULL,
        )
        command += ["--source-sample", str(a.sample)]
        try:
            proc = subprocess.run(command, capture_output=True, text=True)
        finally:
            client.wait()
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    document = json.loads((out / "result.json").read_text())
    b = next(s for s in document["steps"] if s["name"] == "b")["ratio_vs_baseline"]
    fidelity = document.get("fidelity") or {}
    return {
        "ratio": b["median"],
        "ci95": b["ci95"],
        "rounds": b["rounds"],
        "verdict": b["verdict"],
        "fidelity": fidelity.get("verdict"),
        "replayed_share": fidelity.get("replayed_share"),
        "reasons": fidelity.get("reasons", []),
    }


def _capture(source: Source, case: Case, into: Path) -> None:
    source.settings(("log_min_duration_statement=0",))
    start = source.server.log_file.stat().st_size
    try:
        source.run(case.workload, source.args.sample)
    finally:
        source.settings(("log_min_duration_statement=0",), reset=True)
    with source.server.log_file.open("rb") as log:
        log.seek(start)
        into.write_bytes(log.read())


def agrees(truth_verdict: str, pgopt_verdict: str, aa: bool) -> str:
    directional = ("faster", "slower")
    if aa:
        return "yes" if pgopt_verdict not in directional else "NO"
    if truth_verdict not in directional:
        return "n/a (sysbench undecided)"
    return "yes" if pgopt_verdict == truth_verdict else "NO"


def _ratio(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    return f"×{r['ratio']:.2f} [{r['ci95'][0]:.2f}–{r['ci95'][1]:.2f}] {r['verdict']}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default="all", help="comma-separated names, or all")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--table-size", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=4, help="truth rounds, and pgopt's --reps")
    parser.add_argument("--seconds", type=int, default=8, help="each run, sysbench's and pgopt's")
    parser.add_argument("--sample", type=int, default=8, help="seconds of sample or capture")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if shutil.which("sysbench") is None:
        raise SystemExit(
            "sysbench is not installed: make packages (as root), or apt-get install sysbench"
        )
    stop_cleanly_on_signals()
    chosen = [
        c for c in cases(args.tables) if args.cases == "all" or c.name in args.cases.split(",")
    ]
    rng = random.Random(args.seed)
    print("command:", " ".join(["bench/replay_truth.py", *sys.argv[1:]]), flush=True)
    rows = []
    work = Path(tempfile.mkdtemp(prefix="pgopt-replay-truth-"))
    try:
        with EmbeddedTarget(find_binaries(None)) as server:
            source = Source(server, args)
            for case in chosen:
                started = time.monotonic()
                source.prepare(case)
                told = truth(source, case, rng)
                row: dict[str, Any] = {"case": case.name, "workload": case.workload}
                row |= {"change": case.change, "truth": told}
                for via, log in (
                    ("pg_stat_statements", None),
                    ("log capture", work / f"{case.name}.log"),
                ):
                    result = pgopt_ab(source, case, log, work / f"{case.name}-{via[:3]}")
                    result["agrees"] = agrees(
                        told["verdict"], result.get("verdict", ""), case.name == "aa"
                    )
                    row[via] = result
                rows.append(row)
                cost = told["log_cost"]
                took = time.monotonic() - started
                print(f"\n{case.name}: {case.workload}, {case.change} ({took:.0f} s)")
                print(f"  sysbench itself:    {_ratio(told)}")
                for via in ("pg_stat_statements", "log capture"):
                    r = row[via]
                    fidelity = f"{r.get('fidelity')}, {r.get('replayed_share') or 0:.0%} replayed"
                    print(f"  pgopt ({via}): {_ratio(r)}; {fidelity}; agrees: {r['agrees']}")
                print(
                    f"  the log capture's cost to sysbench: {_ratio(cost)} (tps with it / without)",
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"command": sys.argv, "cases": rows}, indent=2))


if __name__ == "__main__":
    main()
