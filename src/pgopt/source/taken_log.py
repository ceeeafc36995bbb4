"""A log capture pgopt takes of the source itself (`ab --synthesize --source-capture
S`): for S seconds the source logs every statement of a share of its transactions,
with their bind values, and pgopt reads those lines back over SQL. It is what a
watch cannot see: the values of prepared statements (and so the hot keys of a
client such as sysbench in its own mode), and each transaction's statements.

- The share is `log_transaction_sample_rate` (PostgreSQL 12+), set with ALTER
  SYSTEM and a reload, chosen so the log holds about TARGET_STATEMENTS statements
  whatever the source's rate (measured over a second first); a sampled transaction
  is logged whole, BEGIN to COMMIT, each statement with its parameters. Where
  `log_parameter_max_length` is 0 it is set to -1 for the window too.
- Every setting it changed is put back as it was (ALTER SYSTEM SET to the value
  postgresql.auto.conf held, or RESET) and reloaded, in a `finally`: also on Ctrl-C
  and SIGTERM. A kill -9 cannot be caught: the undo is printed before the window
  opens.
- The lines are read with pg_read_binary_file from pg_current_logfile (csvlog where
  the server writes it, then jsonlog, then stderr), from where the file ended before
  the window to where it ends after; a log file rotated during the window is read
  on into the new one. pgopt's own session logs nothing (its rate set to 0).

Needs a superuser (ALTER SYSTEM, pg_read_binary_file, pg_file_settings) and
`logging_collector = on` (otherwise the server's log is not a file the server
names); one clear error (exit 2) otherwise, naming --source-log as the way out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from .. import stopping
from ..consoles import err
from ..errors import Interrupted, UsageError
from ..servers.read_only import dict_rows
from .host_cpu import HostCpuWatch
from .shape import HostCpu
from .watch import calls_counted

TARGET_STATEMENTS = 20_000  # statements the window's log holds, about
RATE_WINDOW_S = 1.0  # the source's statements a second, measured over this first
MIN_RATE = 0.001  # log_transaction_sample_rate's resolution is finer; a floor
READ_CHUNK = 8 << 20  # bytes a pg_read_binary_file call
FLUSH_S = 0.5  # the logging collector's lines reach the file after the reload
DESTINATIONS = ("csvlog", "jsonlog", "stderr")  # the file read, first found first
RATE = "log_transaction_sample_rate"
PARAMETER_LENGTH = "log_parameter_max_length"
PUT_BACK_TRIES = 3


@dataclass(frozen=True)
class TakenLog:
    """The lines the source logged during the window, and how they were taken."""

    name: str  # how messages name it: "pgopt's capture of the source's log (10 s, ...)"
    text: str
    rate: float  # the share of transactions logged
    seconds: float
    destination: str  # csvlog, jsonlog or stderr
    host: HostCpu | None = None  # the source's machine over the window, where it is this one


def sample_rate(statements_per_s: float, seconds: float) -> float:
    """The share of transactions to log for about TARGET_STATEMENTS statements in
    `seconds` at `statements_per_s` (all of them for a quiet source), rounded to
    three digits."""
    expected = statements_per_s * seconds
    if expected <= TARGET_STATEMENTS:
        return 1.0
    return max(MIN_RATE, round(TARGET_STATEMENTS / expected, 3))


def destination_of(log_destination: str) -> str | None:
    """The log file to read of the server's `log_destination`: csvlog, then jsonlog
    (each line's fields its own), then stderr; None when it writes none of them."""
    given = {d.strip() for d in log_destination.split(",")}
    return next((d for d in DESTINATIONS if d in given), None)


def settings_for_window(rate: float, parameter_max_length: str | None) -> dict[str, str]:
    """The settings the window changes: the share of transactions logged, and the
    length of each logged parameter where it is 0 (no values)."""
    settings = {RATE: f"{rate:g}"}
    if parameter_max_length == "0":
        settings[PARAMETER_LENGTH] = "-1"
    return settings


def take_log(conn: psycopg.Connection[Any], seconds: float, where: str) -> TakenLog:
    """The source's log of a share of its transactions over `seconds`, every setting
    put back after; one clear error (exit 2) when the source cannot give it."""
    settings = _check(conn, where)
    destination = destination_of(settings["log_destination"])
    assert destination is not None  # _check said why otherwise
    conn.execute(f"set {RATE} = 0")  # this session's own statements stay out
    before = calls_counted(conn)
    time.sleep(RATE_WINDOW_S)
    per_s = max(0, calls_counted(conn) - before - 1) / RATE_WINDOW_S
    rate = sample_rate(per_s, seconds)
    changes = settings_for_window(rate, settings.get(PARAMETER_LENGTH))
    kept = _auto_conf(conn, list(changes))
    start = _log_end(conn, destination)
    err.print(
        f"capturing the source's log for {seconds:g} s: {rate:.1%} of its transactions, "
        f"with their values ({', '.join(f'{k} = {v}' for k, v in changes.items())}, "
        f"put back after; if pgopt is killed first: {undo_sql(changes, kept)})",
        highlight=False,
    )
    host = HostCpuWatch.start(conn)
    try:
        for name, value in changes.items():
            _alter(conn, name, value)
        conn.execute("select pg_reload_conf()")
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            stopping.check()
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    finally:
        _put_back(conn, changes, kept)
    host_cpu = host.finish() if host is not None else None
    time.sleep(FLUSH_S)
    text = _read_since(conn, destination, start)
    name = f"pgopt's capture of the source's log ({seconds:g} s, {rate:.1%} of its transactions)"
    return TakenLog(name, text, rate, seconds, destination, host_cpu)


def _check(conn: psycopg.Connection[Any], where: str) -> dict[str, str]:
    """The settings the window needs to read, or one clear error saying what the
    source lacks."""
    cannot = f"cannot capture {where}'s log"
    if conn.info.server_version < 120000:
        raise UsageError(f"{cannot}: {RATE} needs PostgreSQL 12 or later; give --source-log")
    row = dict_rows(
        conn,
        "select r.rolsuper, current_user as role, "
        "current_setting('logging_collector') as logging_collector, "
        "current_setting('log_destination') as log_destination, "
        f"current_setting('{PARAMETER_LENGTH}', true) as {PARAMETER_LENGTH}, "
        "current_setting('log_line_prefix') as log_line_prefix "
        "from pg_roles r where r.rolname = current_user",
    )[0]
    if not dict_rows(conn, "select 1 from pg_extension where extname = 'pg_stat_statements'"):
        raise UsageError(
            f"{where} has no pg_stat_statements, whose statements a capture is matched to"
        )
    if not row["rolsuper"]:
        raise UsageError(
            f"{cannot}: role {row['role']} is not a superuser (ALTER SYSTEM and reading "
            "the server's log file need one); capture a log yourself and give --source-log"
        )
    if row["logging_collector"] != "on":
        raise UsageError(
            f"{cannot}: its logging_collector is off, so its log is no file the server "
            "can read back; capture a log yourself (log_min_duration_statement = 0) "
            "and give --source-log"
        )
    destination = destination_of(str(row["log_destination"]))
    if destination is None:
        raise UsageError(
            f"{cannot}: its log_destination ({row['log_destination']}) writes no "
            "stderr, csvlog or jsonlog file; give --source-log"
        )
    prefix = str(row["log_line_prefix"])
    if destination == "stderr" and "%c" not in prefix and "%p" not in prefix:
        raise UsageError(
            f"{cannot}: its log_line_prefix ({prefix!r}) has neither %c nor %p, so its "
            "sessions cannot be told apart; add %p, or log to csvlog"
        )
    return {k: str(v) for k, v in row.items() if v is not None}


def _auto_conf(conn: psycopg.Connection[Any], names: list[str]) -> dict[str, str]:
    """The values postgresql.auto.conf holds for `names` (ALTER SYSTEM's own), to
    put back; a name it does not hold is reset."""
    rows = dict_rows(
        conn,
        "select name, setting from pg_file_settings "
        "where sourcefile like '%%postgresql.auto.conf' and name = any(%(names)s) "
        "order by seqno",
        {"names": names},
    )
    return {str(r["name"]): str(r["setting"]) for r in rows}


def undo_sql(changes: dict[str, str], kept: dict[str, str]) -> str:
    """The SQL that puts the settings back, as a person would type it."""
    quoted = {n: kept[n].replace("'", "''") for n in kept}
    steps = [
        f"ALTER SYSTEM SET {n} = '{quoted[n]}'" if n in kept else f"ALTER SYSTEM RESET {n}"
        for n in changes
    ]
    return "; ".join([*steps, "SELECT pg_reload_conf()"])


def _put_back(conn: psycopg.Connection[Any], changes: dict[str, str], kept: dict[str, str]) -> None:
    """The settings as they were, reloaded; a second stop request while this runs
    does not leave them half put back: it is tried again, PUT_BACK_TRIES times."""
    for attempt in range(1, PUT_BACK_TRIES + 1):
        try:
            for name in changes:
                _alter(conn, name, kept.get(name))
            conn.execute("select pg_reload_conf()")
            return
        except (Interrupted, KeyboardInterrupt):
            if attempt == PUT_BACK_TRIES:
                raise


def _alter(conn: psycopg.Connection[Any], name: str, value: str | None) -> None:
    """ALTER SYSTEM SET `name` to `value`, or RESET it for None."""
    if value is None:
        conn.execute(sql.SQL("alter system reset {}").format(sql.Identifier(name)))
    else:
        query = sql.SQL("alter system set {} = {}")
        conn.execute(query.format(sql.Identifier(name), sql.Literal(value)))


def _log_end(conn: psycopg.Connection[Any], destination: str) -> tuple[str, int]:
    """The log file the server writes `destination` to, and its size now."""
    row = dict_rows(
        conn,
        "select f as file, (pg_stat_file(f)).size as size from pg_current_logfile(%(d)s) f",
        {"d": destination},
    )[0]
    if row["file"] is None:
        raise UsageError(f"the source names no {destination} log file (pg_current_logfile)")
    return str(row["file"]), int(row["size"])


def _read_since(conn: psycopg.Connection[Any], destination: str, start: tuple[str, int]) -> str:
    """The log's bytes from `start` (file, offset) to its end now, on into the file
    the server writes now if it rotated the log meanwhile; as text."""
    first, offset = start
    now, end = _log_end(conn, destination)
    data = _read(conn, first, offset, end if now == first else None)
    if now != first:
        data += _read(conn, now, 0, end)
    return data.decode("utf-8", errors="replace")


def _read(conn: psycopg.Connection[Any], file: str, offset: int, end: int | None) -> bytes:
    """`file`'s bytes from `offset` to `end` (None: to its end), in chunks."""
    if end is None:
        end = int(dict_rows(conn, "select (pg_stat_file(%(f)s)).size as s", {"f": file})[0]["s"])
    chunks = []
    while offset < end:
        length = min(READ_CHUNK, end - offset)
        row = dict_rows(
            conn,
            "select pg_read_binary_file(%(f)s, %(o)s, %(n)s) as b",
            {"f": file, "o": offset, "n": length},
        )[0]
        chunks.append(bytes(row["b"]))
        offset += length
    return b"".join(chunks)
