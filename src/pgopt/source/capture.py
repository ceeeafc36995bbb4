"""A log capture as the replay needs it (pure): each logged statement matched to
its pg_stat_statements row by PostgreSQL's own fingerprint (pglast; a statement
sent with literals and its normalized `$n` text fingerprint alike), its values per
`$n` (a prepared statement's bind parameters; a simple one's literals, in the
order pg_stat_statements numbers them), and each session's statements cut into
transactions: BEGIN to COMMIT or ROLLBACK, or one statement alone (autocommit).

Transactions are kept as their statements' sequence of queryids; the replay
runs them as the capture shows them (replay/synthesize.py). Also read: how many
sessions ran at once (by where each session's first and last lines fall in the
log), their protocol, the statements no pg_stat_statements row matched, and the
time each transaction between BEGIN and COMMIT spent idle between its statements:
the application's own work while it holds the transaction's locks and session
(from each line's time and duration: a log with `%m` or `%n` in its prefix, or
csvlog, jsonlog).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from pglast.parser import ParseError, fingerprint, scan

from ..statement_kind import StatementKind, kind_of
from .catalog import SourceStatement
from .log_reader import LoggedStatement
from .shape import HostCpu

CONSTANTS = frozenset({"ICONST", "FCONST", "SCONST", "BCONST", "XCONST", "USCONST"})
PARAM = re.compile(r"\$(\d+)")
THINK_SAMPLES = 1000
# a kind of transaction's own figures (its time between statements, its share) count
# from this many transactions of it on; fewer are no estimate
MIN_KIND = 5

Values = dict[int, "str | None"]


@dataclass(frozen=True)
class Transaction:
    queryids: tuple[str, ...]  # its statements, in order (those pg_stat_statements matched)
    explicit: bool  # between BEGIN and COMMIT, not a statement alone


@dataclass
class Capture:
    """What a log capture says of the source's workload."""

    transactions: Counter[Transaction] = field(default_factory=Counter)
    values: dict[str, list[Values]] = field(default_factory=dict)  # queryid -> per call
    statements: int = 0  # logged runs of statements (transaction control left out)
    unmatched: Counter[str] = field(default_factory=Counter)  # no pg_stat_statements row
    sessions: int = 0  # the most sessions at once
    prepared: int = 0  # runs with the extended protocol
    rolled_back: int = 0
    # the application's time inside each kind of transaction between BEGIN and COMMIT,
    # idle in transaction between its statements (ms, up to THINK_SAMPLES of each)
    think: dict[Transaction, list[float]] = field(default_factory=dict)
    origin: str = "the log capture"  # how the report names it
    # inside its transactions between BEGIN and COMMIT, where the log has times and
    # durations, by their number of statements: the statements' time and the
    # application's between them (ms), and how many transactions
    spent: dict[int, tuple[float, float, int]] = field(default_factory=dict)
    host: HostCpu | None = None  # the source's machine over the capture, where it is this one

    @property
    def database_share(self) -> float | None:
        """The database's share of its transactions' time (an upper bound of its share
        of the sessions' busy time: the time between transactions is not counted),
        from the lengths of transaction seen MIN_KIND times or more where there are
        any: a length seen once or twice is no estimate (a sysbench capture's one
        transaction of its length had 4.4 s between its lines, where 1,317 others
        had under a millisecond, and alone took the share from 30% to 9%)."""
        kept = [t for t in self.spent.values() if t[2] >= MIN_KIND] or list(self.spent.values())
        database, total = sum(t[0] for t in kept), sum(t[0] + t[1] for t in kept)
        return database / total if total > 0 else None

    def add_spent(self, statements: int, database_ms: float, application_ms: float) -> None:
        """One transaction's time of `statements` statements, in `spent`."""
        database, application, count = self.spent.get(statements, (0.0, 0.0, 0))
        self.spent[statements] = (database + database_ms, application + application_ms, count + 1)

    @property
    def protocol(self) -> str:
        return "prepared" if self.prepared * 2 > self.statements else "simple"

    @property
    def statements_per_transaction(self) -> float:
        count = sum(self.transactions.values())
        sizes = sum(len(t.queryids) * n for t, n in self.transactions.items())
        return sizes / count if count else 0.0

    @property
    def note(self) -> str:
        count = sum(self.transactions.values())
        explicit = sum(n for t, n in self.transactions.items() if t.explicit)
        return (
            f"from {self.origin}: {self.statements:,} statements in {count:,} "
            f"transactions ({explicit:,} between BEGIN and COMMIT, "
            f"{self.statements_per_transaction:.3g} statements each), at most "
            f"{self.sessions} sessions at once, {self.protocol} protocol"
        )


def literal_values(query: str) -> tuple[str, ...] | None:
    """The constants of a statement sent with literals, in order (a minus sign that
    starts a number belongs to it); None when it does not scan."""
    try:
        tokens = scan(query)
    except ParseError:
        return None
    out: list[str] = []
    for i, token in enumerate(tokens):
        if token.name not in CONSTANTS:
            continue
        start = token.start
        before = tokens[i - 1] if i else None
        if (
            before is not None
            and query[before.start : before.end + 1] == "-"
            and before.end + 1 == start
            and token.name in ("ICONST", "FCONST")
            and (i < 2 or tokens[i - 2].name not in {"IDENT", *CONSTANTS, "ASCII_41"})
        ):
            start = before.start
        text = query[start : token.end + 1]
        if token.name == "SCONST":
            text = text[1:-1].replace("''", "'")
        out.append(text)
    return tuple(out)


class Matcher:
    """Logged statement texts to queryids, by fingerprint, each text parsed once."""

    def __init__(self, statements: list[SourceStatement]) -> None:
        self.by_print: dict[str, SourceStatement] = {}
        for s in statements:
            printed = _print(s.query)
            if printed is not None:
                self.by_print.setdefault(printed, s)
        self.seen: dict[str, SourceStatement | None] = {}

    def __call__(self, query: str) -> SourceStatement | None:
        if query not in self.seen:
            printed = _print(query)
            self.seen[query] = self.by_print.get(printed) if printed else None
            if len(self.seen) > 100_000:  # texts with literals: each one new
                self.seen.clear()
        return self.seen[query]


def _print(query: str) -> str | None:
    try:
        return str(fingerprint(query))
    except ParseError:
        return None


def capture_of(logged: list[LoggedStatement], statements: list[SourceStatement]) -> Capture:
    """The capture of `logged`, its statements matched to the source's `statements`."""
    match = Matcher(statements)
    capture = Capture()
    open_: dict[str, list[str] | None] = {}  # session -> its open transaction
    idle: dict[str, _Idle] = {}  # session -> its open transaction's time between statements
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for index, entry in enumerate(logged):
        first.setdefault(entry.session, index)
        last[entry.session] = index
        kind = kind_of(entry.query)
        if kind.control is not None and entry.session in idle:
            idle[entry.session].add(entry)  # a savepoint's time is the transaction's
        if kind.ends:
            _ended(capture, open_.pop(entry.session, None), idle.pop(entry.session, None), kind)
        if kind.opens:
            open_[entry.session] = []
            idle[entry.session] = _Idle(entry.at, entry.ms)
        if kind.control is not None:
            continue
        if entry.session in idle:
            idle[entry.session].add(entry)
        capture.statements += 1
        capture.prepared += entry.prepared
        source = match(entry.query)
        if source is None:
            capture.unmatched[entry.query[:200]] += 1
            continue
        capture.values.setdefault(source.queryid, []).append(_values(entry, source))
        running = open_.get(entry.session)
        if running is not None:
            running.append(source.queryid)
        else:
            capture.transactions[Transaction((source.queryid,), False)] += 1
    capture.sessions = _most_at_once(first, last)
    return capture


def _ended(
    capture: Capture, running: list[str] | None, waited: _Idle | None, kind: StatementKind
) -> None:
    """A transaction's end (COMMIT, ROLLBACK, PREPARE TRANSACTION; with AND CHAIN, the
    next one begins at once): the transaction counted, its time between statements
    kept, where it committed."""
    capture.rolled_back += kind.rolls_back
    if not running:
        return
    transaction = Transaction(tuple(running), True)
    capture.transactions[transaction] += 1
    samples = capture.think.setdefault(transaction, [])
    # a rolled-back transaction's gaps hold what failed in it (an error's statement logs
    # no duration: a deadlock's second of waiting read as the application's, and
    # replayed as a sleep that held hot rows)
    if waited is not None and waited.ms is not None and not kind.rolls_back:
        capture.add_spent(len(running), waited.busy_ms, waited.ms)
        if len(samples) < THINK_SAMPLES:
            samples.append(waited.ms)


class _Idle:
    """A transaction's time between its statements: from the end of one (its log line,
    written when it ended) to the start of the next (that line less its duration); None
    once a line lacks its time or duration. And its statements' own time, BEGIN's on."""

    def __init__(self, began: float | None, ms: float | None) -> None:
        self.last, self.ms = began, 0.0 if began is not None else None
        self.busy_ms = ms or 0.0

    def add(self, entry: LoggedStatement) -> None:
        if self.ms is None or self.last is None or entry.at is None or entry.ms is None:
            self.ms = None
            return
        self.ms += max(0.0, (entry.at - entry.ms / 1000 - self.last) * 1000)
        self.busy_ms += entry.ms
        self.last = entry.at


def _values(entry: LoggedStatement, source: SourceStatement) -> Values:
    return {**written_values(entry.query, source), **entry.values}


def written_values(query: str, source: SourceStatement) -> Values:
    """The values per `$n` of `source` (its pg_stat_statements text) written into
    `query`'s own text: all of them for a call sent with literals; for a prepared
    statement, its constants (sysbench's `k=k+1`, an ORM's `LIMIT 1`), which
    pg_stat_statements numbers after the client's own parameters, in the order they
    appear. None where they cannot be told apart."""
    literals = literal_values(query)
    own = {int(n) for n in PARAM.findall(query)}
    wanted = sorted({int(n) for n in PARAM.findall(source.query)} - own)
    if not literals or len(literals) != len(wanted):
        return {}  # pg_stat_statements kept some constant: values not told apart
    return dict(zip(wanted, literals, strict=True))


def _most_at_once(first: dict[str, int], last: dict[str, int]) -> int:
    events = [(i, 1) for i in first.values()] + [(i, -1) for i in last.values()]
    most = running = 0
    for _, step in sorted(events, key=lambda e: (e[0], -e[1])):
        running += step
        most = max(most, running)
    return most
