"""How the source's clients run its statements, from what tells it (pure): how many
statements a commit, how many sessions at once, with which protocol, and what share
of their busy time the database itself works (the application's own work is the
rest). Each figure says where it came from; none is assumed silently.

In order of trust:

- the watch (`--source-sample S`), where it saw work: the calls pg_stat_statements
  counted over the commits pg_stat_database counted, the most sessions at once, and
  the busy sessions' states sampled (running a statement, or idle between statements
  of a request, or idle inside a transaction);
- what the source keeps since its statistics were reset (an idle source: a staging
  server, a quiet hour): pg_stat_statements' calls over pg_stat_database's commits,
  when the two were reset together (their windows match), and from PostgreSQL 14 the
  sessions' active and in-transaction time, and their connected time, whose average
  over the window, rounded up, is about the fewest clients the source had at once
  (an estimate the replay runs where nothing tells the clients, which stay unknown);
  sessions the watch saw connected but idle (a pool's) are its clients;
- a log capture (`--source-log`, capture.py) tells all of it, and is read apart.

Where none tells, the figure is None with the reason and what would tell it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..words import format_duration
from .catalog import SourceWorkload

# the statistics of pg_stat_statements and pg_stat_database cover one window when they
# were reset within this much of each other (or WINDOW_SHARE of the window)
WINDOW_SLACK_S = 5.0
WINDOW_SHARE = 0.05
TELL_SHAPE = (
    "a watch while the application runs (--source-sample S), a log capture "
    "(--source-log FILE), or pg_stat_statements and pg_stat_database reset together "
    "before it runs (select pg_stat_statements_reset(), pg_stat_reset())"
)
TELL_CLIENTS = "--clients N, a watch while the application runs, or a log capture"
TELL_PROTOCOL = (
    'a watch while the application runs, a log capture, or `mode = "prepared"` in ab.toml\'s [a]'
)
TELL_VALUES = (
    "--source-capture S (the source logs a share of its calls for S seconds, its "
    "settings put back after) or --source-log FILE"
)


@dataclass(frozen=True)
class HostCpu:
    """The source's machine (this one) over the watch: its busy CPU, pgopt's own taken
    out, and the source server's share of it (host_cpu.py)."""

    seconds: float
    cores: int
    busy_s: float
    database_s: float

    @property
    def busy_share(self) -> float:
        """How busy the machine's CPUs were, 0 to 1."""
        return self.busy_s / (self.cores * self.seconds) if self.seconds > 0 else 0.0

    @property
    def database_share(self) -> float | None:
        """The source server's share of the machine's busy CPU."""
        return min(1.0, self.database_s / self.busy_s) if self.busy_s > 0 else None


@dataclass(frozen=True)
class Watch:
    """What the watch saw over `seconds`, pgopt's own statements taken out."""

    seconds: float
    calls: int  # statements pg_stat_statements counted (transaction control left out)
    commits: int  # commits pg_stat_database counted
    sessions: int  # the most client sessions at once
    parameterized: int  # samples of sessions whose last statement carried $n
    literal: int  # ... and of those whose last statement did not
    active: int  # samples of sessions running a statement
    idle_in_request: int  # ... idle for under a second: between a request's statements
    idle_in_transaction: int  # ... idle inside a transaction
    host: HostCpu | None = None  # the source's machine, where it is this one


@dataclass(frozen=True)
class Kept:
    """What the source keeps since its statistics were reset (PostgreSQL 14+ for the
    times and pg_stat_statements' reset; seconds since the epoch)."""

    calls: int  # pg_stat_statements' calls in this database (transaction control left out)
    commits: int  # pg_stat_database's commits, pgopt's own taken out
    statements_reset: float | None
    database_reset: float | None  # None: never reset
    now: float
    active_ms: float | None = None
    idle_in_transaction_ms: float | None = None
    sessions: int | None = None  # opened in this database, this one taken out
    session_ms: float | None = None  # their time connected, as far as they reported it


def shape(watch: Watch | None, kept: Kept | None, why_no_kept: str = "") -> SourceWorkload:
    """The source's workload shape: from the watch where it saw work, else from what
    the source keeps where its windows match, else unknown (with the reasons)."""
    protocol = None
    if watch is not None and (watch.parameterized or watch.literal):
        protocol = "prepared" if watch.parameterized > watch.literal else "simple"
    if watch is not None and watch.commits > 0 and watch.calls > 0:
        per = watch.calls / watch.commits
        note = (
            f"over a {watch.seconds:g}-s watch, {watch.calls:,} statements in "
            f"{watch.commits:,} commits ({per:.3g} a commit), at most {watch.sessions} "
            "sessions at once" + (f", {protocol} protocol" if protocol else "")
        )
        share = _watched_share(watch)
        host = watch.host
        return SourceWorkload(
            per,
            watch.sessions or None,
            protocol,
            note,
            per_commit_from=f"the {watch.seconds:g}-s watch",
            clients_from=f"the {watch.seconds:g}-s watch (the most sessions at once)",
            database_share=share,
            database_share_from=(
                f"the {watch.seconds:g}-s watch's samples of its busy sessions"
                if share is not None
                else ""
            ),
            host_busy=host.busy_share if host is not None else None,
            database_cpu_share=host.database_share if host is not None else None,
        )
    idle = (
        f"the {watch.seconds:g}-s watch saw no work"
        if watch is not None
        else "not watched (--source-sample 0)"
    )
    window = _window(kept) if kept is not None else why_no_kept or "nothing kept to read"
    if kept is not None and not isinstance(window, str) and kept.commits > 0 and kept.calls > 0:
        per = kept.calls / kept.commits
        since = f"what the source keeps over the {format_duration(window)} since its reset"
        share = _kept_share(kept)
        clients, clients_from, estimate = None, "", _estimated_clients(kept, window)
        said = f"its clients: unknown ({TELL_CLIENTS})"
        connected = watch.sessions if watch is not None else 0  # none of them working
        fewest = estimate[0] if estimate is not None else 0
        if watch is not None and connected and connected >= fewest:
            clients = connected
            clients_from = f"the {watch.seconds:g}-s watch (its sessions connected, all idle)"
            said = f"its clients: {clients}, connected and idle during the watch"
        elif estimate is not None:
            said += (
                f"; pg_stat_database's sessions since the reset: {kept.sessions:,} opened, "
                f"connected {estimate[1]:.2g} at once on average, so about {fewest} at "
                "once at some time"
            )
        return SourceWorkload(
            per,
            clients,
            protocol,
            f"{idle}; {since}: {kept.calls:,} statements in {kept.commits:,} commits "
            f"({per:.3g} a commit); {said}",
            per_commit_from=since,
            clients_from=clients_from,
            clients_estimated=fewest if estimate is not None and clients is None else None,
            database_share=share,
            database_share_from=(
                f"{since} (its sessions' active time over their time in transactions "
                "and running statements: an upper bound)"
                if share is not None
                else ""
            ),
        )
    if kept is not None and not isinstance(window, str):
        window = "the source ran no statement since its statistics' reset"
    return SourceWorkload(
        None,
        watch.sessions if watch is not None and watch.sessions else None,
        protocol,
        f"{idle}, and {window}: the transaction shape is unknown, each statement replayed "
        f"as its own transaction (what would tell: {TELL_SHAPE})",
    )


def _window(kept: Kept) -> float | str:
    """The seconds both counters cover, or why they do not cover one window."""
    if kept.statements_reset is None:
        return "pg_stat_statements keeps no reset time before PostgreSQL 14"
    if kept.database_reset is None:
        return (
            "pg_stat_database was never reset, so its commits cover another window than "
            "pg_stat_statements' calls"
        )
    window = kept.now - max(kept.statements_reset, kept.database_reset)
    apart = abs(kept.statements_reset - kept.database_reset)
    if window <= 0 or apart > max(WINDOW_SLACK_S, WINDOW_SHARE * window):
        return (
            f"pg_stat_statements and pg_stat_database were reset {format_duration(apart)} apart, "
            "so their counts cover different windows"
        )
    return window


def _estimated_clients(kept: Kept, window: float) -> tuple[int, float] | None:
    """About the fewest sessions the source had connected at once at some time since
    its reset, and their average over the window: their time connected over the
    window, whose peak is at least the average rounded up. An estimate, not a bound:
    a session reports its time connected when it next reports its statistics, so one
    idle since before the reset adds time from before it (the pgbench of an
    integration test, 2 clients and the connection it opens first, read as 3), and
    one idle since its last report adds none yet."""
    if not kept.sessions or not kept.session_ms or window <= 0:
        return None
    average = kept.session_ms / 1000 / window
    return (math.ceil(average), average) if average >= 1 else None


def _watched_share(watch: Watch) -> float | None:
    """The database's share of its busy sessions' sampled time: running a statement,
    against that and the application's own time (idle between a request's statements,
    or inside a transaction)."""
    busy = watch.active + watch.idle_in_request + watch.idle_in_transaction
    return watch.active / busy if busy else None


def _kept_share(kept: Kept) -> float | None:
    """Active time over active and idle-in-transaction time: an upper bound of the
    database's share (the time idle between transactions is not counted, as pg_stat_
    database cannot tell a request's from a session waiting for one)."""
    if kept.active_ms is None or kept.idle_in_transaction_ms is None:
        return None
    total = kept.active_ms + kept.idle_in_transaction_ms
    return kept.active_ms / total if total > 0 else None
