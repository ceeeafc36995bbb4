"""Read a live server's evidence for `pgopt advise`, read-only.

One session, servers/read_only.py's (application_name `pgopt advise`): nothing it
runs can write, wait long on a lock, or go unnoticed. It reads what the evidence is worth (queries/
advise_evidence.sql), each rule's query at the start of the sample, samples the
wait events of the server's other sessions for the sample's length (the labs'
sampler, every application but pgopt's own) and, for the hot-rows rule, which
statements wait for which rows (row_locks.py); then it reads the queries of rules
that count rates again at the end, pg_stat_statements too where a rule names the
statements behind its findings. A query this role may not run makes its rules
"not checked", with the server's reason.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.rows import dict_row

from ..errors import TargetError, first_line
from ..observe.sampler import Scope, WaitSampler
from ..queries import load
from ..redact import redact_dsn
from ..servers.read_only import CONNECT_TIMEOUT_S, dict_rows, session_params
from .behind import STATEMENTS
from .findings import Evidence, Readings
from .row_locks import INTERVAL_S, summarize
from .row_locks import QUERY as ROW_LOCKS
from .rules import Rule


@dataclass
class LiveServer:
    """The user's server as the sampler sees it: a DSN, no CPU figures (it may be remote)."""

    params: dict[str, Any]

    def conninfo(self, dbname: str | None = None) -> dict[str, Any]:
        return {**self.params, **({"dbname": dbname} if dbname else {})}

    def backend_cpu_s(self, pid: int) -> float | None:
        return None


def read_server(
    dsn: str, rules: Iterable[Rule], sample_s: float, say: Callable[[str], None]
) -> Readings:
    where = redact_dsn(dsn)
    params = session_params(dsn, "advise")
    rules = list(rules)
    locks = " and pg_locks five times a second (hot-rows)" if any(r.sampled for r in rules) else ""
    try:
        with psycopg.connect(**params, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            say(  # connected (an unreachable server is its one line), nothing read yet
                f"will read {where} for about {sample_s:g} s, read-only: its catalogs and "
                f"statistics, then pg_stat_activity ten times a second{locks}, each in a "
                "session of its own, then its statistics again"
            )
            facts = dict_rows(conn, load("advise_evidence"), {})[0]
            major = int(facts["version_num"]) // 10000
            # a rule whose extension is not installed is not checked (findings.py says
            # why); its query is not sent, so no ERROR lands in the server's log
            wanted = [r for r in rules if r.applies_to(major) and _installed(r, facts)]
            # the statements behind a finding are read where pg_stat_statements is
            names = facts["statements"] and any(r.behind for r in wanted)
            naming = {STATEMENTS} if names else set()
            queries = sorted({r.query for r in wanted if not r.sampled} | naming)
            before, failed = _read_all(conn, queries, int(facts["version_num"]))
            databases = [
                r["datname"] for r in dict_rows(conn, "select datname from pg_database", {})
            ]
            say(f"sampling the server's sessions for {sample_s:g} s")
            started = time.monotonic()
            sampler = WaitSampler(
                LiveServer(params),
                scope=Scope(tuple(databases), ()),
                interval_s=0.1,
                read_only=True,
            )
            row_locks = RowLockSampler(params) if any(r.sampled for r in wanted) else None
            with sampler, row_locks or nullcontext():
                time.sleep(sample_s)
            elapsed = time.monotonic() - started
            rated = sorted(({r.query for r in wanted if r.rates} | naming) - set(failed))
            after_rated, more_failed = _read_all(conn, rated, int(facts["version_num"]))
    except psycopg.OperationalError as e:
        raise TargetError(f"cannot read {where}: {first_line(e)}") from e
    after = {**before, **after_rated}
    if row_locks is not None and row_locks.error:
        failed[ROW_LOCKS] = row_locks.error
    elif row_locks is not None:
        before[ROW_LOCKS] = after[ROW_LOCKS] = summarize(row_locks.samples)
    evidence = Evidence(
        version_num=int(facts["version_num"]),
        stats_age_s=float(facts["stats_age_s"]),
        uptime_s=float(facts["uptime_s"]),
        stats_visible=bool(facts["stats_visible"]),
        statements=bool(facts["statements"]),
        never_analyzed=tuple(facts["never_analyzed"]),
        sample_s=elapsed,
        waits=sampler.counts,
        pgstattuple=bool(facts["pgstattuple"]),
        tables=int(facts["tables"]),
        tables_with_rows=int(facts["tables_with_rows"]),
    )
    return Readings(evidence, before, after, {**failed, **more_failed})


@dataclass
class RowLockSampler:
    """Context manager: samples the row-lock waiters from entry to exit."""

    params: dict[str, Any]
    samples: list[list[dict[str, Any]]] = field(default_factory=list)
    error: str | None = None

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pgopt-row-locks", daemon=True)

    def __enter__(self) -> RowLockSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        query = load(ROW_LOCKS)
        try:
            with (
                psycopg.connect(
                    **self.params, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
                ) as conn,
                conn.cursor(row_factory=dict_row) as cur,
            ):
                while not self._stop.is_set():
                    # {}: '%%' in the query reads as '%'
                    self.samples.append(cur.execute(query, {}, prepare=True).fetchall())
                    self._stop.wait(INTERVAL_S)
        except psycopg.Error as e:
            self.error = first_line(e)


def _installed(rule: Rule, facts: dict[str, Any]) -> bool:
    """Every extension `rule` reads through is installed in the database."""
    needed = {"statements": "statements", "pgstattuple": "pgstattuple"}
    return all(facts[needed[n]] for n in rule.needs if n in needed)


def _read_all(
    conn: psycopg.Connection[Any], names: list[str], version_num: int
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    read, failed = {}, {}
    for name in names:
        try:
            # {}: '%%' in the query reads as '%'
            read[name] = dict_rows(conn, load(name, version_num), {})
        except psycopg.Error as e:
            if isinstance(e, psycopg.OperationalError) and conn.closed:
                raise
            failed[name] = first_line(e)
    return read, failed
