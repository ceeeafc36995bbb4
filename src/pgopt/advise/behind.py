"""The statements behind a finding (pure), from pg_stat_statements read at the start
and at the end of advise's sample.

`commits`: the statements that commit most, for commit-bound. pg_stat_statements
does not say whether a statement ran in a transaction of its own, so each is named
for what it is: a COMMIT (an explicit transaction ends; track_utility counts them),
or a write (INSERT, UPDATE, DELETE, MERGE, COPY FROM, a
data-modifying WITH), which commits on its own
unless it ran between BEGIN and COMMIT. A read commits too, but a transaction
without an xid does not wait for the WAL flush, so reads are not named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..statement_kind import Control, kind_of
from ..words import flat_query

TOP = 5
STATEMENTS = "advise_statements"  # the query whose rows these read


def commit_kind(query: str) -> str | None:
    """ "commit", "write", or None for a statement that makes no commit wait on a flush."""
    kind = kind_of(query)
    if not kind.parsed or kind.statements != 1:
        return None
    if kind.control is not None:
        return "commit" if kind.control is Control.COMMIT else None
    return "write" if kind.writes else None  # a data-modifying WITH, a COPY FROM too


SAID = {
    "commit": "a COMMIT: explicit transactions end",
    "write": "a write: its own transaction, unless it runs between BEGIN and COMMIT",
}


def committing(
    before: list[dict[str, Any]], after: list[dict[str, Any]], sample_s: float
) -> list[dict[str, Any]]:
    """The statements that commit most during the sample, most calls first."""
    earlier = {row["queryid"]: int(row["calls"] or 0) for row in before}
    out: list[dict[str, Any]] = []
    for row in after:
        kind = commit_kind(str(row["query"]))
        # a statement first seen during the sample made all its calls in it
        calls = int(row["calls"] or 0) - earlier.get(row["queryid"], 0)
        if kind is None or calls <= 0 or sample_s <= 0:
            continue
        rate = calls / sample_s
        out.append(
            {
                "query": str(row["query"]),
                "query_short": flat_query(str(row["query"]), 60),
                "calls_per_s": round(rate, 2),
                "kind": kind,
                "said": f"{rate:,.0f} calls a second, {SAID[kind]}",
            }
        )
    out.sort(key=lambda s: -s["calls_per_s"])
    return out[:TOP]


# what each `behind` of a rule names, from the statements' rows before and after
BEHIND: dict[str, Callable[[list[dict[str, Any]], list[dict[str, Any]], float], list[Any]]] = {
    "commits": committing
}
