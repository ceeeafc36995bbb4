"""The values the source's clients send, as a watch sees them (pure): the calls its
clients sent with their values written in (the simple protocol, an ORM's client-side
binding; pg_stat_activity shows their text, source/watch.py), each matched to its
pg_stat_statements row by PostgreSQL's own fingerprint, as a log capture's are
(capture.py), and read into its values per `$n`.

A statement's values are kept where the watch saw at least MIN_CALLS of its calls: a
few calls would pin the replay to a few rows. A watch sees a call by its text while
it runs or until its session sends the next: calls that run longer, or come before a
pause, are seen more often than others (the values' weights lean that way).
Prepared statements show `$n`, not their values: only a log capture holds those.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .capture import Matcher, Values, written_values
from .catalog import SourceStatement

MIN_CALLS = 20  # a statement's values are drawn from what the watch saw from this many calls


@dataclass(frozen=True)
class SeenValues:
    """The values of each statement the watch saw often enough (queryid -> per call),
    and how many calls with literals it saw in all."""

    values: dict[str, list[Values]]
    calls: int  # texts the watch read
    matched: int  # ... that matched a statement of pg_stat_statements

    @property
    def note(self) -> str:
        if not self.calls:
            return ""
        return (
            f"the watch's look at the calls its clients sent with their values written in "
            f"({self.calls:,} calls, {self.matched:,} of them matched to pg_stat_statements): "
            f"the values of {len(self.values)} statement(s) seen {MIN_CALLS} times or more "
            "are drawn from them, the others' from the data's statistics"
        )


def seen_values(texts: Iterable[str], statements: list[SourceStatement]) -> SeenValues:
    """The values per `$n` of each of `statements` the watch saw at least MIN_CALLS
    times in `texts` (calls sent with literals)."""
    match = Matcher(statements)
    calls: dict[str, list[Values]] = {}
    read = matched = 0
    for text in texts:
        read += 1
        source = match(text)
        if source is None:
            continue
        matched += 1
        values = written_values(text, source)
        if values:
            calls.setdefault(source.queryid, []).append(values)
    kept = {queryid: c for queryid, c in calls.items() if len(c) >= MIN_CALLS}
    return SeenValues(kept, read, matched)
