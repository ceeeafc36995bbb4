"""A real client of another kind than sysbench: a Django web shop (bench/shop/) whose SQL the
ORM writes, run as N worker processes (like N gunicorn workers, each with its own persistent
connection) doing requests back to back, so a bench can hold the application's own ratio
(requests/s after a change over before) against pgopt's.

    python bench/shop_load.py --dsn DSN prepare [--scale 1] [--seed 1]
    python bench/shop_load.py --dsn DSN run [--workers 4] [--seconds 10] [--seed 1]

`prepare` drops and creates the shop's tables (shopapp_customer, shopapp_product,
shopapp_order, shopapp_orderline) and fills them: 20,000 customers, 2,000 products, 50,000
orders of 1 to 5 lines a scale unit, then ANALYZE; it prints one JSON line of counts.
`run` prints one JSON line:

    {"requests": ..., "seconds": ..., "requests_per_s": ..., "workers": N,
     "per_kind": {"login": {"requests": ..., "errors": ..., "mean_ms": ...}, ...},
     "errors": ...}

`seconds` is the wall time from the moment every worker was connected and ready to the last
one's end. A request that fails (an error from the database) counts in `errors`, and the
worker goes on. Exit codes: 0; 1 a worker failed; 2 a DSN it cannot connect to, tables not
prepared, a bad argument; 130 Ctrl-C or SIGTERM (the workers are stopped first). Needs Django
5.2 (`pip install 'django>=5.2,<5.3'`); imports nothing from pgopt.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue
import random
import signal
import sys
import time
from collections.abc import Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the `shop` package beside this file

READY_TIMEOUT_S = 120.0


class Failure(Exception):
    """A failure to say in one line, with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def connect(dsn: str, *, prepared: bool) -> None:
    """Configure Django for the DSN and connect once, or fail with exit code 2; with
    `prepared`, the shop's tables must be there."""
    import psycopg
    import shop

    try:
        shop.setup(dsn)
    except psycopg.ProgrammingError as error:  # the DSN does not parse
        raise Failure(f"bad DSN: {one_line(error)}", 2) from None
    from django.db import OperationalError, connection

    try:
        connection.ensure_connection()
    except OperationalError as error:
        raise Failure(f"cannot connect: {one_line(error)}", 2) from None
    if prepared:
        from shop.seed import MODELS

        missing = {m._meta.db_table for m in MODELS} - set(connection.introspection.table_names())
        if missing:
            names = ", ".join(sorted(missing))
            raise Failure(f"tables missing ({names}): run `prepare` first", 2)


def prepare(dsn: str, scale: float, seed: int) -> dict[str, Any]:
    connect(dsn, prepared=False)
    from shop.seed import prepare as seed_tables

    started = time.perf_counter()
    seeded = seed_tables(scale=scale, seed=seed)
    return {**vars(seeded), "seconds": round(time.perf_counter() - started, 1)}


def worker(index: int, dsn: str, seconds: float, seed: int, start: Any, results: Any) -> None:
    """One worker process: connect, say ready, wait for the start, then requests back to back
    for `seconds`. SIGTERM ends it after the request under way, reporting nothing; SIGINT is
    ignored (the parent stops the workers)."""
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import shop

        shop.setup(dsn)
        from django.db import DatabaseError, connections
        from shop import views

        site = views.Shop.open(random.Random(seed * 1_000 + index))
    except Exception as error:
        results.put(("failed", index, one_line(error)))
        return
    results.put(("ready", index, None))
    while not start.wait(0.2):
        if stopping:
            return
    kinds = list(views.REQUESTS)
    weights = [weight for _, weight in views.REQUESTS.values()]
    counts = dict.fromkeys(kinds, 0)
    errors = dict.fromkeys(kinds, 0)
    busy = dict.fromkeys(kinds, 0.0)
    clock = time.perf_counter
    deadline = clock() + seconds
    now = clock()
    while now < deadline and not stopping:
        kind = site.rng.choices(kinds, weights)[0]
        try:
            views.handle(kind, site)
        except DatabaseError:
            errors[kind] += 1
        finished = clock()
        counts[kind] += 1
        busy[kind] += finished - now
        now = finished
    connections.close_all()
    if not stopping:
        results.put(("done", index, {"requests": counts, "errors": errors, "busy": busy}))


def gather(results: Any, workers: Sequence[BaseProcess], what: str, timeout: float) -> list[Any]:
    """One `what` message from every worker; a worker that failed or died is a Failure."""
    got: dict[int, Any] = {}
    deadline = time.monotonic() + timeout
    while len(got) < len(workers):
        try:
            kind, index, body = results.get(timeout=0.5)
        except queue.Empty:
            dead = [i for i, p in enumerate(workers) if p.exitcode is not None and i not in got]
            if dead:  # a last look: what it sent before it ended may still be in the pipe
                try:
                    kind, index, body = results.get(timeout=1.0)
                except queue.Empty:
                    code = workers[dead[0]].exitcode
                    raise Failure(f"worker {dead[0]} ended (exit code {code})", 1) from None
            elif time.monotonic() > deadline:
                raise Failure(f"workers not {what} after {timeout:.0f} s", 1) from None
            else:
                continue
        if kind == "failed":
            raise Failure(f"worker {index}: {body}", 1)
        if kind == what:
            got[index] = body
    return [got[i] for i in range(len(workers))]


def run(dsn: str, workers: int, seconds: float, seed: int) -> dict[str, Any]:
    connect(dsn, prepared=True)
    from django.db import connections

    connections.close_all()  # the workers connect on their own
    context = mp.get_context("spawn")
    results = context.Queue()
    start = context.Event()
    processes = [
        context.Process(
            target=worker,
            args=(i, dsn, seconds, seed, start, results),
            name=f"shop-worker-{i}",
        )
        for i in range(workers)
    ]
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited: Ctrl-C is the parent's
    try:
        for process in processes:
            process.start()
    finally:
        signal.signal(signal.SIGINT, handler)
    try:
        gather(results, processes, "ready", READY_TIMEOUT_S)
        started = time.perf_counter()
        start.set()
        reports = gather(results, processes, "done", seconds + READY_TIMEOUT_S)
        wall = time.perf_counter() - started
        for process in processes:
            process.join()
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()  # SIGTERM: the request under way ends, then the worker
        for process in processes:
            process.join(10)
            if process.is_alive():
                process.kill()
                process.join()
    per_kind: dict[str, dict[str, Any]] = {}
    for kind in reports[0]["requests"]:
        count = sum(report["requests"][kind] for report in reports)
        busy = sum(report["busy"][kind] for report in reports)
        per_kind[kind] = {
            "requests": count,
            "errors": sum(report["errors"][kind] for report in reports),
            "mean_ms": round(1_000 * busy / count, 3) if count else None,
        }
    total = sum(entry["requests"] for entry in per_kind.values())
    return {
        "requests": total,
        "seconds": round(wall, 3),
        "requests_per_s": round(total / wall, 1),
        "per_kind": per_kind,
        "workers": workers,
        "errors": sum(entry["errors"] for entry in per_kind.values()),
    }


def interrupt(signum: int, _frame: object) -> NoReturn:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def positive(kind: type) -> Any:
    def parse(text: str) -> Any:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be above 0: {text}")
        return value

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="A Django web shop's load on PostgreSQL: prepare its tables, or run it."
    )
    parser.add_argument("--dsn", required=True, help="libpq DSN or URL of the database")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    commands = parser.add_subparsers(dest="command", required=True)
    prepare_parser = commands.add_parser("prepare", help="drop, create and fill the tables")
    prepare_parser.add_argument(
        "--scale", type=positive(float), default=1.0, help="row counts times this (default 1)"
    )
    run_parser = commands.add_parser("run", help="requests back to back, one JSON line")
    run_parser.add_argument("--workers", type=positive(int), default=4)
    run_parser.add_argument("--seconds", type=positive(float), default=10.0)
    for sub in (prepare_parser, run_parser):  # --seed also after the command
        sub.add_argument("--seed", type=int, default=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, interrupt)
    try:
        if args.command == "prepare":
            report = prepare(args.dsn, args.scale, args.seed)
        else:
            report = run(args.dsn, args.workers, args.seconds, args.seed)
    except Failure as failure:
        print(f"shop_load: {failure}", file=sys.stderr)
        return failure.code
    except KeyboardInterrupt:
        print("shop_load: interrupted", file=sys.stderr)
        return 130
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
