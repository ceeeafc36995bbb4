"""Replay truth: does `pgopt ab --synthesize` reach the ratio the application itself
gets? Two applications nobody here wrote (bench/truth_clients.py): sysbench, and a
Django web shop whose SQL the ORM writes.

For each case (an application, how the source is watched, one change), on one
throwaway PostgreSQL 18:

1. **the application's own A/B**: it measures A and B on the source, in `--rounds`
   rounds of a random order each (the change applied before B's run and undone after),
   and pgopt's own paired rule (analysis/verdicts.py) judges the ratio;
2. **pgopt**, for each way the case reads the source: `watch` (`pgopt ab --source-dsn
   ... --synthesize` samples the source while the application runs), `idle` (the
   application ran and stopped; its statistics were reset together before, so pgopt
   reads its transactions from what the source keeps), `log` (a log capture,
   `--source-log`), `capture` (pgopt has the source log a share of its transactions
   itself, `--source-capture`); on an aged source, both copies (physical and `--copy
   logical`).

Prints, per case and way, both ratios with their 95% intervals and verdicts, the
distance |ln(pgopt / application)|, whether the intervals overlap, the replay's
fidelity and copy, and the database's share of the source's busy session time with
Amdahl's bound on what pgopt's ratio is worth to the application; at the end, every
row in one table and the goal's line (bench/truth_goal.py). `--json FILE` keeps them.
Run from the repository root (the shop needs `pip install -e '.[bench]'`):

    .venv/bin/python bench/replay_truth.py [--cases sync_rw,shop_index,...] [--ways capture]
        [--json out.json] [--source-setting commit_delay=2000 --source-setting commit_siblings=0]

`--source-setting` sets the source's server: `commit_delay` with `commit_siblings=0`
holds every synchronous commit that long before its flush, its row locks held, as a
disk whose flush takes that long would (this machine's flushes take about 0.1 ms, a
cloud volume's 1-2 ms).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from common import run_pgopt, stop_cleanly_on_signals
from truth_clients import Client, Shop, Sysbench
from truth_goal import agreement, goal_lines

from pgopt.analysis.amdahl import (
    application_bound,
    cpus_bind,
    round_pairs,
    shared_cpu_estimate,
    shared_cpu_interval,
)
from pgopt.analysis.verdicts import Rule, paired, verdict
from pgopt.binaries import find_binaries
from pgopt.servers.embedded import EmbeddedTarget


@dataclass(frozen=True)
class Case:
    name: str
    client: str  # "sysbench" or "shop"
    workload: str  # sysbench's, or "shop"
    change: str  # what B is, in words
    settings: tuple[str, ...] = ()  # B's NAME=VALUE
    b_sql: tuple[str, ...] = ()  # B's SQL, on the source (truth) and on B's copy (pgopt)
    undo_sql: tuple[str, ...] = ()  # back to A on the source
    secondary: bool = True  # sysbench's index on k, made at prepare
    ways: tuple[str, ...] = ("watch", "log")
    options: tuple[str, ...] = ()  # sysbench's, e.g. --range_size=1000
    aged_s: float = 0.0  # sysbench's writes on the source before anything is measured
    copies: tuple[str, ...] = ("auto",)


def _each(template: str, tables: int) -> tuple[str, ...]:
    return tuple(template.format(n=n) for n in range(1, tables + 1))


SHOP_INDEXES = (
    "create index shop_order_status on shopapp_order (status, created_at)",
    "create index shop_customer_email on shopapp_customer (upper(email::text))",
)


def cases(tables: int) -> list[Case]:
    sync = ("synchronous_commit=off",)
    return [
        Case(
            "aa",
            "sysbench",
            "oltp_read_only",
            "A/A (work_mem = 4MB, its default)",
            ("work_mem=4MB",),
        ),
        Case(
            "sync_rw",
            "sysbench",
            "oltp_read_write",
            "synchronous_commit = off",
            sync,
            ways=("watch", "log", "capture"),
        ),
        Case(
            "sync_rw_idle",
            "sysbench",
            "oltp_read_write",
            "synchronous_commit = off, the source idle during the watch",
            sync,
            ways=("idle",),
        ),
        Case(
            "sync_wo",
            "sysbench",
            "oltp_write_only",
            "synchronous_commit = off",
            sync,
            ways=("watch", "log", "capture"),
        ),
        Case(
            "sync_wo_uniform",
            "sysbench",
            "oltp_write_only",
            "synchronous_commit = off, keys drawn uniformly (no hot keys)",
            sync,
            options=("--rand-type=uniform",),
        ),
        Case(
            "sync_rw_uniform",
            "sysbench",
            "oltp_read_write",
            "synchronous_commit = off, keys drawn uniformly (no hot keys)",
            sync,
            ways=("watch",),
            options=("--rand-type=uniform",),
        ),
        Case(
            "sync_rw_literal",
            "sysbench",
            "oltp_read_write",
            "synchronous_commit = off, its values sent as literals (no prepared statements)",
            sync,
            ways=("watch",),
            options=("--db-ps-mode=disable",),
        ),
        Case(
            "sync_wo_literal",
            "sysbench",
            "oltp_write_only",
            "synchronous_commit = off, its values sent as literals (no prepared statements)",
            sync,
            ways=("watch",),
            options=("--db-ps-mode=disable",),
        ),
        Case(
            "drop_index",
            "sysbench",
            "oltp_update_index",
            "drop the index on k that every UPDATE maintains",
            b_sql=_each("drop index k_{n}", tables),
            undo_sql=_each("create index k_{n} on sbtest{n}(k)", tables),
        ),
        Case(
            "add_index",
            "sysbench",
            "select_random_ranges",
            "add the index on k its ranges need",
            b_sql=_each("create index k_{n} on sbtest{n}(k)", tables),
            undo_sql=_each("drop index k_{n}", tables),
            secondary=False,
        ),
        Case(
            "aged_rw",
            "sysbench",
            "oltp_read_write",
            "synchronous_commit = off on an aged source, ranges of 1,000 rows",
            sync,
            ways=("watch", "log", "capture"),
            options=("--range_size=1000",),
            aged_s=60.0,
            copies=("auto", "logical"),
        ),
        Case(
            "aged_rw_literal",
            "sysbench",
            "oltp_read_write",
            "synchronous_commit = off on an aged source, ranges of 1,000 rows, its values "
            "sent as literals",
            sync,
            ways=("watch",),
            options=("--range_size=1000", "--db-ps-mode=disable"),
            aged_s=60.0,
        ),
        Case(
            "shop_index",
            "shop",
            "shop",
            "the two indexes the shop lacks",
            b_sql=SHOP_INDEXES,
            undo_sql=("drop index shop_order_status", "drop index shop_customer_email"),
            ways=("watch",),
        ),
        Case("shop_sync", "shop", "shop", "synchronous_commit = off", sync, ways=("watch",)),
    ]


class Source:
    """The source server and the application's database on it."""

    def __init__(self, server: EmbeddedTarget, args: argparse.Namespace) -> None:
        self.server, self.args = server, args
        self.admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        self.dsn = f"postgresql://postgres@127.0.0.1:{server.port}/app"

    def client(self, case: Case) -> Client:
        a = self.args
        if case.client == "shop":
            return Shop(self.dsn, workers=a.threads)
        return Sysbench(
            self.server.port,
            "app",
            case.workload,
            a.tables,
            a.table_size,
            a.threads,
            case.options,
            case.secondary,
        )

    def prepare(self, case: Case) -> Client:
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute("drop database if exists app with (force)")
            conn.execute("create database app")
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("create extension pg_stat_statements")
        client = self.client(case)
        client.prepare()
        if case.aged_s and isinstance(client, Sysbench):
            client.age(case.aged_s)
        self.sql("vacuum analyze" if not case.aged_s else "analyze")
        return client

    def csvlog(self) -> Path:
        """The csvlog file the source writes now (its logging collector is on)."""
        with psycopg.connect(self.admin, autocommit=True) as conn:
            row = conn.execute("select pg_current_logfile('csvlog')").fetchone()
        assert row is not None and row[0], "the source writes no csvlog"
        return self.server.data_dir / row[0]

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

    def deadlocks(self) -> int:
        """The deadlocks the server has broken in the application's database so far
        (each cost a transaction deadlock_timeout, 1 s, of waiting first)."""
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            row = conn.execute(
                "select deadlocks from pg_stat_database where datname = current_database()"
            ).fetchone()
        return int(row[0]) if row else 0

    def measured(
        self, client: Client, case: Case, variant: str, seconds: float
    ) -> tuple[float, float, float, int]:
        """The application's rate over `seconds`, the CPU its client and the server
        spent on each of its transactions (or requests), in µs, and its deadlocks."""
        self.sql("checkpoint")
        if variant == "b":
            self.settings(case.settings)
            self.sql(*case.b_sql)
        try:
            deadlocks = self.deadlocks()
            client_before = _children_cpu_s()
            server_before = self.server.server_cpu_s() or 0.0
            rate = client.rate(seconds)
            client_s = _children_cpu_s() - client_before
            server_s = (self.server.server_cpu_s() or 0.0) - server_before
            done = rate * seconds or 1.0
            deadlocks = self.deadlocks() - deadlocks
            return rate, client_s / done * 1e6, server_s / done * 1e6, deadlocks
        finally:
            if variant == "b":
                self.settings(case.settings, reset=True)
                self.sql(*case.undo_sql)


def _deadlocks(by_arm: dict[str, list[int]]) -> str:
    return ", ".join(f"{arm.upper()} {by_arm.get(arm, [])}" for arm in ("a", "b"))


def _children_cpu_s() -> float:
    """The CPU time of this process's finished children (a client, and its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _judged(a: list[float], b: list[float]) -> dict[str, Any]:
    e = paired(a, b)
    return {
        "ratio": e.ratio,
        "ci95": list(e.ci95),
        "rounds": e.rounds,
        "verdict": str(verdict(e, higher_is_better=True, rule=Rule())),
    }


def truth(
    source: Source, client: Client, case: Case, rng: random.Random, ways: list[str]
) -> dict[str, Any]:
    """The application's own A/B; with a log capture among the `ways`, what the log
    costs it too (A with the log on)."""
    arms = ["a", "b", *(["logged"] if "log" in ways else [])]
    runs: dict[str, list[float]] = {arm: [] for arm in arms}
    cpu: dict[str, list[tuple[float, float]]] = {arm: [] for arm in arms}
    deadlocks: dict[str, list[int]] = {arm: [] for arm in arms}
    for _ in range(source.args.rounds):
        for arm in rng.sample(arms, len(arms)):
            if arm == "logged":
                source.settings(("log_min_duration_statement=0",))
                try:
                    rate, *costs = source.measured(client, case, "a", source.args.seconds)
                finally:
                    source.settings(("log_min_duration_statement=0",), reset=True)
            else:
                rate, *costs = source.measured(client, case, arm, source.args.seconds)
            runs[arm].append(rate)
            cpu[arm].append((costs[0], costs[1]))
            deadlocks[arm].append(int(costs[2]))
    told = {
        **_judged(runs["a"], runs["b"]),
        "runs": runs,
        "cpu_us": _cpu_us(cpu["a"], cpu["b"]),
        "deadlocks": {arm: deadlocks[arm] for arm in ("a", "b")},
    }
    if "logged" in runs:
        told["log_cost"] = _judged(runs["a"], runs["logged"])
    return told


def _cpu_us(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> dict[str, float]:
    """The medians of A's and B's client and server CPU a transaction, in µs."""
    return {
        "client_a": statistics.median(c for c, _ in a),
        "server_a": statistics.median(s for _, s in a),
        "client_b": statistics.median(c for c, _ in b),
        "server_b": statistics.median(s for _, s in b),
    }


def _replay_cpu_us(document: dict[str, Any]) -> dict[str, float] | None:
    """The same of pgopt's replay: pgbench's CPU and the server's, per transaction."""
    seconds = document["params"]["duration_s"]
    steps = {s["name"]: s for s in document["steps"]}
    per: dict[str, list[tuple[float, float]]] = {"a": [], "b": []}
    for arm, found in per.items():
        for run in steps[arm]["runs"]:
            done = (run.get("tps") or 0) * seconds
            if done and run.get("client_cpu_s") is not None and run.get("server_cpu_s"):
                found.append((run["client_cpu_s"] / done * 1e6, run["server_cpu_s"] / done * 1e6))
    return _cpu_us(per["a"], per["b"]) if per["a"] and per["b"] else None


def pgopt_ab(
    source: Source, client: Client, case: Case, way: str, copy: str, out: Path
) -> dict[str, Any]:
    """pgopt ab on the source's workload, read the `way` the case says."""
    a = source.args
    command = [sys.executable, "-m", "pgopt", "ab", "--source-dsn", source.dsn, "--synthesize"]
    command += ["--copy-rate", "max", "--copy-checkpoint", "fast"]  # a throwaway source
    for item in case.settings:
        command += ["--b-setting", item]
    if case.b_sql:
        b_sql = out.with_name(f"{out.name}-b.sql")
        b_sql.write_text("".join(f"{statement};\n" for statement in case.b_sql))
        command += ["--b-sql", str(b_sql)]
    command += ["--reps", str(a.rounds), "--duration", str(a.seconds), "--out", str(out)]
    command += ["--copy", copy, *a.pgopt_arg]
    if way == "log":
        log = out.with_name(f"{out.name}.log")
        _capture(source, client, log)
        command += ["--source-log", str(log), "--source-sample", "0"]
        proc = run_pgopt(command)
    elif way == "idle":  # the application ran and stopped, its statistics reset before
        source.sql("select pg_stat_statements_reset(), pg_stat_reset()")
        client.rate(a.sample)
        command += ["--source-sample", "2"]
        proc = run_pgopt(command)
    else:  # watched, or pgopt's capture of its log, as the application runs
        source.sql("select pg_stat_statements_reset()")
        running = client.start(a.sample + 4)
        flag = "--source-capture" if way == "capture" else "--source-sample"
        command += [flag, str(a.sample)]
        try:
            proc = run_pgopt(command)
        finally:
            running.wait()
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    if a.keep:  # the run's folder (its workload, result.json, reports) kept to read
        shutil.copytree(out, a.keep / out.name, dirs_exist_ok=True)
    document = json.loads((out / "result.json").read_text())
    b = next(s for s in document["steps"] if s["name"] == "b")["ratio_vs_baseline"]
    fidelity = document.get("fidelity") or {}
    share = fidelity.get("database_share")
    return {
        **_shared_cpus(document, b["median"]),
        "ratio": b["median"],
        "ci95": b["ci95"],
        "rounds": b["rounds"],
        "verdict": b["verdict"],
        "fidelity": fidelity.get("verdict"),
        "replayed_share": fidelity.get("replayed_share"),
        "reasons": fidelity.get("reasons", []),
        "copy": document.get("time", {}).get("copy_kind"),
        "database_share": share,
        "application_bound": application_bound(b["median"], share) if share else None,
        "cpu_us": _replay_cpu_us(document),
        "deadlocks": {
            s["name"]: [
                int((r.get("stats") or {}).get("database", {}).get("deadlocks", 0))
                for r in s["runs"]
            ]
            for s in document["steps"]
        },
        "failed_checks": sorted(
            {
                f"{step['name']}: {c['name']}: {c.get('detail', '')}"
                for step in document["steps"]
                for c in step["checks"]
                if not c["passed"]
            }
        ),
    }


def _shared_cpus(document: dict[str, Any], ratio: float) -> dict[str, Any]:
    """The source's machine over the watch (this one), and what pgopt's report says
    B's ratio is about to an application whose own work is CPU on it."""
    fidelity = document.get("fidelity") or {}
    busy, cpu_share = fidelity.get("host_busy"), fidelity.get("database_cpu_share")
    steps = {s["name"]: s.get("server_cpu_us_per_tx") for s in document["steps"]}
    out = {
        "host_busy": busy,
        "database_cpu_share": cpu_share,
        "shared_cpu_estimate": None,
        "shared_cpu_ci95": None,
    }
    if busy is not None and cpus_bind(busy) and cpu_share and steps["a"] and steps["b"]:
        cpu_ratio = steps["b"]["median"] / steps["a"]["median"]
        out["shared_cpu_estimate"] = shared_cpu_estimate(ratio, cpu_share, cpu_ratio)
        runs = {s["name"]: _run_figures(s) for s in document["steps"]}
        interval = shared_cpu_interval(round_pairs(runs["a"], runs["b"]), cpu_share)
        out["shared_cpu_ci95"] = list(interval) if interval else None
    return out


def _run_figures(step: dict[str, Any]) -> list[tuple[int, float, float, int]]:
    """Each run's round, rate, server CPU and transactions, where all are known (the
    report's figures for the estimate's interval, from result.json)."""
    keys = ("round", "tps", "server_cpu_s", "transactions")
    return [
        (int(r["round"]), float(r["tps"]), float(r["server_cpu_s"]), int(r["transactions"]))
        for r in step["runs"]
        if all(r.get(k) for k in keys)
    ]


def _capture(source: Source, client: Client, into: Path) -> None:
    """A log capture as a user takes one: every statement for --sample seconds, the
    lines of the server's csvlog copied out."""
    source.sql("select pg_stat_statements_reset()")
    source.settings(("log_min_duration_statement=0",))
    log = source.csvlog()
    start = log.stat().st_size
    try:
        client.rate(source.args.sample)
    finally:
        source.settings(("log_min_duration_statement=0",), reset=True)
    time.sleep(0.5)  # the logging collector's last lines
    with log.open("rb") as f:
        f.seek(start)
        into.write_bytes(f.read())


def _ratio(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    return f"×{r['ratio']:.2f} [{r['ci95'][0]:.2f}–{r['ci95'][1]:.2f}] {r['verdict']}"


def _cpu(us: dict[str, float]) -> str:
    return (
        f"A {us['client_a']:.0f} µs and {us['server_a']:.0f} µs, "
        f"B {us['client_b']:.0f} µs and {us['server_b']:.0f} µs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default="all", help="comma-separated names, or all")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--table-size", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=4, help="sysbench's, the shop's workers")
    parser.add_argument(
        "--rounds", type=int, default=4, help="the application's rounds, pgopt's --reps"
    )
    parser.add_argument(
        "--seconds", type=int, default=8, help="each run, the application's and pgopt's"
    )
    parser.add_argument("--sample", type=int, default=8, help="seconds of watch or capture")
    parser.add_argument(
        "--ways", default="all", help="comma-separated: watch, idle, log, capture; or all"
    )
    parser.add_argument(
        "--source-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="one more setting of the source's server, e.g. commit_delay=2000 with "
        "commit_siblings=0 for a disk whose flush takes 2 ms (A and B carry it, as pgopt "
        "carries the source's WAL settings)",
    )
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--keep", type=Path, help="a folder to keep each pgopt run's folder in")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--pgopt-arg",
        action="append",
        default=[],
        help="one more argument for every pgopt ab, e.g. --pgopt-arg=--slice --pgopt-arg=0",
    )
    args = parser.parse_args()
    chosen = [
        c for c in cases(args.tables) if args.cases == "all" or c.name in args.cases.split(",")
    ]
    if any(c.client == "sysbench" for c in chosen) and shutil.which("sysbench") is None:
        raise SystemExit(
            "sysbench is not installed: make packages (as root), or apt-get install sysbench"
        )
    stop_cleanly_on_signals()
    rng = random.Random(args.seed)
    print("command:", " ".join(["bench/replay_truth.py", *sys.argv[1:]]), flush=True)
    rows = []
    work = Path(tempfile.mkdtemp(prefix="pgopt-replay-truth-"))
    try:
        # its log kept as files, as on a production server (the capture reads it back)
        settings = {"logging_collector": "on", "log_destination": "stderr,csvlog"}
        for given in args.source_setting:
            name, sep, value = given.partition("=")
            if not sep or not name:
                raise SystemExit(f"--source-setting {given}: not NAME=VALUE")
            settings[name.strip()] = value.strip()
        with EmbeddedTarget(find_binaries(None), base_settings=settings) as server:
            source = Source(server, args)
            for case in chosen:
                started = time.monotonic()
                client = source.prepare(case)
                ways = [w for w in case.ways if args.ways == "all" or w in args.ways.split(",")]
                told = truth(source, client, case, rng, ways)
                row: dict[str, Any] = {"case": case.name, "client": case.client}
                row |= {"workload": case.workload, "change": case.change, "truth": told}
                for way in ways:
                    for copy in case.copies:
                        key = f"{way} ({copy} copy)" if len(case.copies) > 1 else way
                        out = work / f"{case.name}-{way}-{copy}"
                        result = pgopt_ab(source, client, case, way, copy, out)
                        if "error" not in result:
                            result |= agreement(told, result)
                        row[key] = result
                rows.append(row)
                took = time.monotonic() - started
                print(f"\n{case.name}: {case.client} {case.workload}, {case.change} ({took:.0f} s)")
                print(f"  the application itself: {_ratio(told)}")
                for key, r in row.items():
                    if not isinstance(r, dict) or key == "truth":
                        continue
                    far = (
                        f"distance {r['distance']:.2f}, within 15%: {r['within']}, "
                        f"intervals overlap: {r['overlap']}"
                        if "distance" in r
                        else ""
                    )
                    share = (
                        f"; the database {r['database_share']:.0%} of the busy time, the "
                        f"application at most ×{r['application_bound']:.2f}"
                        if r.get("database_share")
                        else ""
                    )
                    print(f"  pgopt ({key}): {_ratio(r)}; {far}")
                    print(f"    {r.get('fidelity')}, {r.get('copy')} copy{share}")
                    if r.get("host_busy") is not None:
                        print(
                            f"    the machine's CPUs {r['host_busy']:.0%} busy over the "
                            f"watch, the database {r['database_cpu_share']:.0%} of that"
                            + (
                                f"; an application on them: about "
                                f"×{r['shared_cpu_estimate']:.2f} (distance "
                                f"{abs(math.log(r['shared_cpu_estimate'] / told['ratio'])):.2f})"
                                if r.get("shared_cpu_estimate")
                                else ""
                            )
                        )
                    for failed in r.get("failed_checks", []):
                        print(f"    check failed: {failed}")
                    if r.get("cpu_us"):
                        print(f"    CPU a transaction, pgbench and its server: {_cpu(r['cpu_us'])}")
                    print(f"    deadlocks a run: {_deadlocks(r['deadlocks'])}")
                own = _cpu(told["cpu_us"])
                print(f"  CPU a transaction, the application and its server: {own}")
                print(f"  deadlocks a run, the application: {_deadlocks(told['deadlocks'])}")
                if "log_cost" in told:
                    print(
                        f"  the log capture's cost to the application: {_ratio(told['log_cost'])}"
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if rows:
        print("\n" + "\n".join(goal_lines(rows)))
    if args.json:
        args.json.write_text(json.dumps({"command": sys.argv, "cases": rows}, indent=2))


if __name__ == "__main__":
    main()
