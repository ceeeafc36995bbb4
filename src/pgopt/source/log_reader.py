"""A PostgreSQL server log as the statements its sessions ran, with their values
(pure: text in, records out).

A capture is a log written with `log_min_duration_statement = 0` (or
`log_statement = 'all'`): each statement a line, `statement: ...` for the simple
protocol (its values are the literals in its text), `execute NAME: ...` for
prepared statements, whose values are in the line's detail, `Parameters: $1 =
'...'` (`log_parameter_max_length`, -1 by default, must not be 0). Three formats:

- csvlog and jsonlog (`log_destination`), which carry the session id and the
  application name in fields of their own;
- stderr, whose `log_line_prefix` must hold `%c` (the session id) or `%p` (the
  process id) to tell sessions apart; a multi-line statement continues on lines
  that begin with a tab, and the detail comes as a `DETAIL:` line of its own.

The parse and bind lines of the extended protocol are left out (the execute line
is the statement's run), as are pgopt's own sessions (application name `pgopt`).
pgreplay and pgbadger read the same lines; this reader learns from them, keeps
jsonlog (which pgreplay does not read) and hands the statements to the
synthesis, which replays them with pgbench rather than once at their timing.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from sys import intern
from typing import Any, TextIO

CSV_FIELDS = 23  # csvlog has 23 fields (PostgreSQL 13) to 26 (14 and later)
CSV_SESSION, CSV_SEVERITY, CSV_MESSAGE, CSV_DETAIL, CSV_APPLICATION = 5, 11, 13, 14, 22
CSV_DATABASE = 2
RUN = re.compile(
    r"^(?:duration: (?P<ms>[\d.]+) ms\s+)?(?:statement: |execute (?P<name>[^:]*): )(?P<query>.*)\Z",
    re.S,
)
PARAMETER = re.compile(r"\$(\d+) = (NULL|'(?:[^']|'')*')")
NEEDS = (
    "a capture needs log_min_duration_statement = 0 (or log_statement = 'all'), "
    "log_parameter_max_length = -1 (the default), and, for a stderr log, a "
    "log_line_prefix with %c or %p (e.g. '%m [%p] %c ')"
)


class LogError(ValueError):
    """The log cannot be read as a capture; the message says why, in one line."""


@dataclass(frozen=True)
class LoggedStatement:
    session: str
    query: str
    prepared: bool  # run with the extended protocol: its values are `values`
    values: dict[int, str | None]  # $n -> its text value (None: NULL)
    ms: float | None  # its duration, where the log has it
    at: float | None = None  # when its line was written (its end), in seconds


@dataclass(frozen=True)
class _Entry:
    session: str
    severity: str
    message: str
    detail: str
    application: str
    position: int  # its line's place in the log: entries may be given out of order
    at: float | None = None  # its time, where the log has one to the millisecond
    database: str = ""  # its session's database, where the log names it


def read_log(
    log: str | TextIO, prefix: str | None = None, database: str | None = None
) -> list[LoggedStatement]:
    """The statements of a csvlog, jsonlog or stderr log (its text, or a file open
    with newline=''), in the log's order, read line by line; `prefix`: the source's
    log_line_prefix (a stderr log needs it); `database`: only that database's
    statements where the log names it on some of its lines (csvlog, jsonlog, a prefix
    with %d): a server's log holds every database's. A log that never names it (a
    capture of the production database, replayed against a copy of another name) is
    read whole."""
    lines = io.StringIO(log) if isinstance(log, str) else log
    first = next((line for line in lines if line.strip()), "")
    if not first:
        raise LogError(f"the log is empty: {NEEDS}")
    rest = itertools.chain([first], lines)
    entries: Iterable[_Entry]
    if first.lstrip().startswith("{"):
        entries = _json_entries(rest)
    elif re.match(r"\d{4}-\d\d-\d\d [\d:.]+ \S+,", first):
        entries = _csv_entries(rest)
    else:
        entries = _stderr_entries(rest, prefix)
    statements: list[tuple[int, LoggedStatement, str]] = []
    for entry in entries:
        if entry.severity != "LOG" or entry.application.startswith("pgopt"):
            continue
        run = RUN.match(entry.message)
        if run is None:
            continue
        prepared = run.group("name") is not None
        values = _values(entry.detail)
        if prepared and "$1" in run.group("query") and not values:
            raise LogError(
                "the log's prepared statements come without their values (no "
                f"'Parameters:' detail): {NEEDS}"
            )
        ms = float(run.group("ms")) if run.group("ms") else None
        query = intern(run.group("query").strip())  # a prepared text repeats: kept once
        logged = LoggedStatement(intern(entry.session), query, prepared, values, ms, entry.at)
        statements.append((entry.position, logged, entry.database))
    if database and any(named == database for _, _, named in statements):
        statements = [s for s in statements if s[2] in (database, "")]
    if not statements:
        raise LogError(f"the log holds no statement a session ran: {NEEDS}")
    statements.sort(key=lambda item: item[0])  # the log's order
    return [logged for _, logged, _ in statements]


def _values(detail: str) -> dict[int, str | None]:
    if not detail.startswith("Parameters: "):
        return {}
    out: dict[int, str | None] = {}
    for n, value in PARAMETER.findall(detail):
        out[int(n)] = None if value == "NULL" else value[1:-1].replace("''", "'")
    return out


def _csv_entries(lines: Iterable[str]) -> Iterator[_Entry]:
    """Each csvlog line's entry; a field of any size (csv's own limit, 128 KiB by
    default, is lifted: a bulk INSERT's statement is longer)."""
    csv.field_size_limit(sys.maxsize)  # the module's one setting, raised for every reader
    rows = csv.reader(lines)
    try:
        for position, row in enumerate(rows):
            if len(row) < CSV_FIELDS:
                raise LogError(f"a csvlog line has {len(row)} fields, not {CSV_FIELDS} or more")
            yield _Entry(
                row[CSV_SESSION],
                row[CSV_SEVERITY],
                row[CSV_MESSAGE],
                row[CSV_DETAIL],
                row[CSV_APPLICATION],
                position,
                _seconds(row[0]),
                row[CSV_DATABASE],
            )
    except csv.Error as e:
        raise LogError(f"csvlog line {rows.line_num} cannot be read as CSV: {e}") from None


def _json_entries(lines: Iterable[str]) -> Iterator[_Entry]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise LogError(f"jsonlog line {number} is not JSON: {e.msg}") from None
        except ValueError as e:  # a number past int's 4300 digits
            raise LogError(f"jsonlog line {number} is not a PostgreSQL jsonlog: {e}") from None
        if not isinstance(record, dict) or "message" not in record:
            raise LogError(f"jsonlog line {number} has no 'message': not a PostgreSQL jsonlog")
        yield _Entry(
            str(record.get("session_id") or record.get("pid") or ""),
            str(record.get("error_severity", "")),
            str(record["message"]),
            str(record.get("detail", "")),
            str(record.get("application_name", "")),
            number,
            _seconds(str(record.get("timestamp", ""))),
            str(record.get("dbname", "")),
        )


PREFIX_ESCAPES = {
    "a": r"(?P<a>.*?)",
    "u": r"\S*?",
    "d": r"(?P<d>\S*?)",
    "r": r"\S*?",
    "h": r"\S*?",
    "b": r".*?",
    "p": r"(?P<p>\d+)",
    "P": r"\d*",
    "t": r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+",
    "m": r"(?P<m>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+)",
    "n": r"(?P<n>[\d.]+)",
    "i": r".*?",
    "e": r"[0-9A-Z]{5}",
    "c": r"(?P<c>[0-9a-f]+\.[0-9a-f]+)",
    "l": r"\d+",
    "s": r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+",
    "v": r"[\d/]*",
    "x": r"\d+",
    "Q": r"-?\d+",
    "q": "",
}


def prefix_pattern(prefix: str) -> re.Pattern[str]:
    """A regular expression for log lines written with `log_line_prefix`, then the
    severity and the message."""
    parts, i, named = [], 0, set()
    while i < len(prefix):
        escape = re.match(r"%-?\d*([a-zA-Z%])", prefix[i:])
        if prefix[i] == "%" and escape:
            letter = escape.group(1)
            part = re.escape("%") if letter == "%" else PREFIX_ESCAPES.get(letter, r".*?")
            if f"(?P<{letter}>" in part and letter in named:  # a group named once
                part = part.replace(f"(?P<{letter}>", "(?:")
            named.add(letter)
            parts.append(rf"\s*{part}\s*" if escape.group(0)[1:-1] else part)
            i += len(escape.group(0))
        else:
            parts.append(re.escape(prefix[i]))
            i += 1
    return re.compile("^" + "".join(parts) + r"(?P<severity>[A-Z]+):  (?P<message>.*)$")


def _stderr_entries(lines: Iterable[str], prefix: str | None) -> Iterator[_Entry]:
    """Each entry once the next line of its session has come (its DETAIL, if any,
    comes before that), so only one entry a session is held; a multi-line
    statement's lines are kept apart and joined once (a bulk INSERT has thousands)."""
    if prefix is None:
        raise LogError("the log is not csvlog or jsonlog, and its log_line_prefix is not known")
    if "%c" not in prefix and "%p" not in prefix:
        raise LogError(
            f"log_line_prefix {prefix!r} has neither %c nor %p: the sessions cannot be "
            f"told apart; {NEEDS}"
        )
    pattern = prefix_pattern(prefix)
    pending: dict[str, dict[str, Any]] = {}  # session -> its last entry, not yet given
    going_on: list[str] | None = None  # the lines a line that begins with a tab continues
    seen = 0
    for raw in lines:
        line = raw.rstrip("\r\n")
        if line.startswith("\t") and going_on is not None:
            going_on.append(line[1:])
            continue
        match = pattern.match(line)
        if match is None:
            continue
        seen += 1
        groups = match.groupdict()
        session = groups.get("c") or groups.get("p") or ""
        if match.group("severity") == "DETAIL" and session in pending:
            going_on = pending[session]["detail"] = [match.group("message")]
            continue
        if session in pending:
            yield _joined(pending.pop(session))
        going_on = [match.group("message")]
        pending[session] = {
            "session": session,
            "severity": match.group("severity"),
            "message": going_on,
            "detail": [],
            "application": groups.get("a") or "",
            "position": seen,
            "at": _seconds(groups.get("m") or groups.get("n") or ""),
            "database": groups.get("d") or "",
        }
    if not seen:
        raise LogError(
            f"no line of the log starts with its log_line_prefix {prefix!r}: a log in "
            "another format, or written with another prefix"
        )
    for entry in pending.values():
        yield _joined(entry)


def _joined(fields: dict[str, Any]) -> _Entry:
    """An entry of its lines, message and detail each joined once."""
    lines = {"message": "\n".join(fields["message"]), "detail": "\n".join(fields["detail"])}
    return _Entry(**{**fields, **lines})


def _seconds(text: str) -> float | None:
    """A log line's time in seconds: `%m` (and csvlog's, jsonlog's) '2026-11-27
    12:00:00.123 UTC', or `%n`'s epoch; None where it has none to the millisecond
    (the zone is taken as the log's own: only the differences within it are used)."""
    text = text.strip()
    if re.fullmatch(r"\d+\.\d+", text):
        return float(text)
    if re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+", text):
        stamp = datetime.strptime(text.split()[0] + " " + text.split()[1], "%Y-%m-%d %H:%M:%S.%f")
        return stamp.replace(tzinfo=UTC).timestamp()
    return None
