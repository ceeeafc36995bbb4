"""Shared by the measurement scripts: a throwaway server and a pgopt run against it."""

from __future__ import annotations

import argparse
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psycopg

from pgopt.analysis.verdicts import Rule, paired, verdict
from pgopt.model.result import LabResult
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_result

T = TypeVar("T")
SMOKE = Path(__file__).resolve().parent.parent / "src/pgopt/labs/smoke"  # pgbench's tables
SCRIPTS = {"tpcb": "tpcb-like", "select": "select-only"}  # --workload: pgbench's builtin
# at scale 2 the two TPC-B-like clients update the same branch row in half their
# transactions (plain pgbench against itself, 16 rounds: 15% a round; 7.8% at 10)
DEFAULT_SCALE = {"tpcb": 10, "select": 2}
# a lab on pgbench's tables at scale 1, 2 clients, runs of {duration} s until decided
PGBENCH_LAB_HEAD = """[dataset]
variable = "scale_factor"
size = 1
min = 1
setup = ["pgbench_tables.sql"]

[metric]
name = "tps"
unit = "tx/s"

[run]
clients = 2
duration = {duration}
warmup = 1
reps = "auto"
"""


def stop_cleanly_on_signals() -> None:
    """SIGTERM and SIGINT (which a background job ignores by default) end a bench as
    Ctrl-C would, so the throwaway server it started is stopped and removed."""

    def interrupt(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, interrupt)


def apply_settings(server: EmbeddedTarget, settings: list[str]) -> None:
    """`--setting NAME=VALUE`s, with ALTER SYSTEM and a reload, for every run after."""
    with server.connect("postgres") as conn:
        for item in settings:
            name, _, value = item.partition("=")
            conn.execute(f"alter system set {name} = '{value}'")
        conn.execute("select pg_reload_conf()")


def server_dsn(server: EmbeddedTarget) -> str:
    """The server's unix socket, as plain pgbench uses it: TCP would cost pgopt's side
    alone (about 15% of select-only tps here)."""
    return f"postgresql:///postgres?host={server.socket_dir}&port={server.port}&user=postgres"


def run_pgopt(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a pgopt command line to its end, its output kept. Interrupted (Ctrl-C,
    SIGTERM), the child gets SIGTERM and is waited for, so it stops and removes the
    servers it started; subprocess.run would SIGKILL it and leave them behind."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate()
    except BaseException:
        proc.terminate()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


def pgopt_run(args: list[str]) -> LabResult:
    """Run `pgopt lab run ...` in a subprocess; return its stored result (its run
    folder is removed once read)."""
    out = Path(tempfile.mkdtemp(prefix="pgopt-bench-")) / "run"
    proc = run_pgopt([sys.executable, "-m", "pgopt", "lab", "run", *args, "--out", str(out)])
    try:
        if proc.returncode != 0:
            raise SystemExit(f"pgopt failed:\n{proc.stderr}")
        return load_result(out)
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)  # the result is read: nothing left


def report(name_a: str, a: list[float], name_b: str, b: list[float]) -> None:
    """a[i] and b[i] ran in the same round: the project's paired verdict of A over B."""
    e = paired(b, a)
    decided = verdict(e, higher_is_better=True, rule=Rule())
    print(f"{name_a}: {[round(x) for x in a]} median {statistics.median(a):.0f}")
    print(f"{name_b}: {[round(x) for x in b]} median {statistics.median(b):.0f}")
    print(
        f"{name_a}/{name_b}: {e.ratio:.4f} [95% {e.ci95[0]:.4f}-{e.ci95[1]:.4f}], "
        f"{len(a)} rounds, {decided}"
    )


def paired_costs(
    pairs: int, rng: random.Random, run: Callable[[bool], tuple[float, T]], label: str
) -> tuple[list[float], list[float], list[T]]:
    """`pairs` pairs of runs in a random order each, one without (`run(False)`) and
    one with what is measured (`run(True)`): their rates, and what each run with it
    returned besides; then the project's paired verdict of with over without."""
    alone: list[float] = []
    measured: list[float] = []
    extras: list[T] = []
    for pair in range(1, pairs + 1):
        order = [False, True]
        rng.shuffle(order)
        rates = {}
        for with_it in order:
            rates[with_it], extra = run(with_it)
            extras += [extra] if with_it else []
        alone.append(rates[False])
        measured.append(rates[True])
        print(f"pair {pair}: alone {rates[False]:,.0f} tx/s, {label} {rates[True]:,.0f}")
    result = paired(alone, measured)
    low, high = result.ci95
    said = verdict(result, higher_is_better=True, rule=Rule())
    print(f"{label} / alone: ×{result.ratio:.3f} [{low:.3f}–{high:.3f}] {said}")
    return alone, measured, extras


def cost_arguments(doc: str, seconds: int) -> argparse.Namespace:
    """The arguments of a bench of what pgopt's look at a source costs it: pairs of
    pgbench runs of `seconds` on pgbench's tables at a scale, 2 clients by default."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=seconds)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--seed", type=int, default=44)
    return parser.parse_args()


def pgbench_tables(pgbench: str, dsn: str, scale: int) -> None:
    """pgbench's tables at `scale` in `dsn`, vacuumed and analyzed, with
    pg_stat_statements, as a source's."""
    subprocess.run([pgbench, "-i", "-q", "-s", str(scale), dsn], check=True, capture_output=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create extension if not exists pg_stat_statements")
        conn.execute("vacuum analyze")


TPS = re.compile(r"tps = ([\d.]+)")


def pgbench_beside(command: list[str], look: Callable[[], T] | None) -> tuple[float, T | None]:
    """pgbench's rate for `command`, with `look` run in a thread beside it when given
    (pgopt's watch, its capture), and what `look` returned."""
    got: list[T] = []
    thread = threading.Thread(target=lambda: got.append(look())) if look else None
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if thread is not None:
        thread.start()
    out, _ = proc.communicate()
    if thread is not None:
        thread.join()
    match = TPS.search(out)
    assert match is not None, out
    return float(match.group(1)), (got[0] if got else None)
