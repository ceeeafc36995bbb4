"""How the source's clients run its statements, read in the replay's read-only session:
a watch of `--source-sample` seconds (its sessions sampled twice a second, the calls
and commits counted before and after, and a hundred times a second the statements its
clients sent with their values written in: each such call once), and what the source
keeps since its statistics were reset; the transaction counter as it starts
(written.py reads the keys written since); shape.py makes the figures of them, each with
where it came from; seen.py reads the values of the calls; host_cpu.py the CPU of the
source's machine over the watch, where it is this one."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import psycopg

from ..consoles import err
from ..queries import find, load
from ..servers.read_only import dict_rows
from .catalog import SourceWorkload
from .host_cpu import HostCpuWatch
from .shape import Kept, Watch, shape
from .written import watch_xid

SAMPLE_EVERY_S = 0.5  # pg_stat_activity's sessions during the watch
LOOKS_A_SAMPLE = 50  # looks at the calls sent with literals, per sample of the sessions
MAX_LITERAL_CALLS = 20_000  # kept of those, at most
TRANSACTION_CONTROL = re.compile(
    r"\s*(begin|commit|rollback|start|end|abort|savepoint|release|prepare transaction)\b", re.I
)
STATES = ("active", "idle_in_request", "idle_in_transaction")


@dataclass(frozen=True)
class ClientsRan:
    """The source's workload shape, and the texts of the calls the watch saw sent
    with their values written in (each call once; none for prepared statements)."""

    workload: SourceWorkload
    literal_calls: tuple[str, ...] = ()
    since_xid: str | None = None  # the transaction counter as the watch started


def how_clients_ran(conn: psycopg.Connection[Any], seconds: float) -> ClientsRan:
    """The source's workload shape: what it keeps (read first, before this session's
    own statements add to it), then a watch of `seconds` (none for 0)."""
    installed = bool(_installed(conn))
    kept, why = _kept(conn, installed)
    if seconds <= 0:
        return ClientsRan(shape(None, kept, why))
    err.print(
        f"watching the source for {seconds:g} s: its sessions every {SAMPLE_EVERY_S:g} s, "
        "the statements and commits it counts, the values of calls sent as literals",
        highlight=False,
    )
    since_xid = watch_xid(conn)
    watch, literal_calls = _watch(conn, seconds, installed)
    return ClientsRan(shape(watch, kept, why), literal_calls, since_xid)


def _installed(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    return dict_rows(conn, "select 1 from pg_extension where extname = 'pg_stat_statements'")


def calls_counted(conn: psycopg.Connection[Any]) -> int:
    """The statements the source's pg_stat_statements has counted so far in this
    database (transaction control left out)."""
    rows = dict_rows(conn, load("source_statements", conn.info.server_version))
    return sum(int(r["calls"]) for r in rows if not TRANSACTION_CONTROL.match(str(r["query"])))


def _kept(conn: psycopg.Connection[Any], installed: bool) -> tuple[Kept | None, str]:
    """What the source keeps since its reset, this session's own commits (one a
    statement so far: it runs in autocommit) and calls taken out; or why not."""
    query = find("source_kept", conn.info.server_version)
    if query is None:
        return None, "PostgreSQL 13 and older keep no pg_stat_statements reset time"
    if not installed:
        return None, "the source has no pg_stat_statements"
    row = dict_rows(conn, query)[0]
    ours = 2  # the two statements before this one
    calls = calls_counted(conn) - 1  # the query above, counted once it ended
    return (
        Kept(
            calls=max(0, calls),
            commits=max(0, int(row["xact_commit"]) - ours),
            statements_reset=row["statements_reset"],
            database_reset=row["database_reset"],
            now=float(row["now"]),
            active_ms=_float(row["active_ms"]),
            idle_in_transaction_ms=_float(row["idle_in_transaction_ms"]),
            sessions=max(0, int(row["sessions"]) - 1),  # this one taken out
            session_ms=_float(row["session_ms"]),
        ),
        "",
    )


def _watch(
    conn: psycopg.Connection[Any], seconds: float, installed: bool
) -> tuple[Watch, tuple[str, ...]]:
    """Over `seconds`: the calls pg_stat_statements counted and the commits
    pg_stat_database counted (this session's own taken out of both), the most
    sessions seen at once, their protocol ($n in what they last ran: prepared
    statements) and their states, sampled; and the calls sent with literals."""
    ours = 0  # statements this session runs between the two counts, each a commit
    first = _activity(conn)
    calls_before = calls_counted(conn) if installed else 0
    ours += 1
    sessions = first["sessions"]
    counts = {k: int(first[k]) for k in ("parameterized", "literal", *STATES)}
    literal = _LiteralCalls(first["now"])
    host = HostCpuWatch.start(conn)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for _ in range(LOOKS_A_SAMPLE):
            time.sleep(SAMPLE_EVERY_S / LOOKS_A_SAMPLE)
            ours += literal.look(conn)
        seen = _activity(conn)
        ours += 1
        sessions = max(sessions, seen["sessions"])
        for k in counts:
            counts[k] += int(seen[k])
    calls = (calls_counted(conn) - calls_before - ours) if installed else 0
    last = _activity(conn)
    commits = int(last["xact_commit"]) - int(first["xact_commit"]) - ours - 2
    host_cpu = host.finish() if host is not None else None
    watch = Watch(seconds, max(0, calls), max(0, commits), int(sessions), **counts, host=host_cpu)
    return watch, tuple(literal.texts)


class _LiteralCalls:
    """The calls started since the previous look that carry their values as literals,
    each call once (by when it started), up to MAX_LITERAL_CALLS."""

    def __init__(self, since: Any) -> None:
        self.since = since
        self.texts: list[str] = []

    def look(self, conn: psycopg.Connection[Any]) -> int:
        """One look; the statements it ran on the source (each a commit)."""
        if len(self.texts) >= MAX_LITERAL_CALLS:
            return 0
        rows = dict_rows(conn, load("source_literal_calls"), {"since": self.since})
        if rows:
            self.since = max(r["query_start"] for r in rows)
            self.texts.extend(str(r["query"]) for r in rows)
        return 1


def _activity(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    return dict_rows(conn, load("source_activity", conn.info.server_version))[0]


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
