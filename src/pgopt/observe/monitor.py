"""Time series of lab-defined SQL during a timed run (queue depth, dead tuples, ...).

A thread with its own connection runs each query once per interval and keeps
(seconds since start, value) pairs, e.g. `select count(*) from t_order_q`; each
series' median and maximum become facts of the run (`series_facts`).
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Mapping
from typing import Any

import psycopg

from ..servers.base import Target

MONITOR_APPLICATION = "pgopt-monitor"


class SqlMonitor:
    """Context manager: polls `queries` (name -> SQL returning one number) until exit."""

    def __init__(self, target: Target, queries: Mapping[str, str], interval_s: float = 1.0) -> None:
        self.target = target
        self.queries = dict(queries)
        self.interval_s = interval_s
        self.series: dict[str, list[list[float]]] = {name: [] for name in self.queries}
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pgopt-monitor", daemon=True)

    def __enter__(self) -> SqlMonitor:
        if self.queries:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.queries:
            self._stop.set()
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        params = {**self.target.conninfo(), "application_name": MONITOR_APPLICATION}
        started = time.monotonic()
        try:
            with psycopg.connect(**params, autocommit=True, connect_timeout=10) as conn:
                while True:
                    self._sample(conn, time.monotonic() - started)
                    if self._stop.wait(self.interval_s):
                        break
                self._sample(conn, time.monotonic() - started)
        except psycopg.Error as e:
            self.error = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__

    def _sample(self, conn: psycopg.Connection[Any], elapsed: float) -> None:
        for name, query in self.queries.items():
            row = conn.execute(query).fetchone()
            value = float(row[0]) if row and row[0] is not None else float("nan")
            self.series[name].append([round(elapsed, 2), value])


def series_facts(series: Mapping[str, list[list[float]]]) -> dict[str, str]:
    """Pure: each monitored series' median and maximum over a run, as run facts."""
    facts: dict[str, str] = {}
    for name, points in series.items():
        values = [v for _, v in points if not math.isnan(v)]  # NaN: the query gave null
        if values:
            facts[f"{name}, median"] = f"{statistics.median(values):.6g}"
            facts[f"{name}, max"] = f"{max(values):.6g}"
    return facts
