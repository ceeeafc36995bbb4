"""Which statements wait for which rows (advise's hot-rows rule), from samples of
the sessions waiting on a row lock taken during advise's sampling window
(evidence.py's RowLockSampler): their summary (pure).

Each sample (queries/advise_row_locks.sql, one short read-only statement every
0.2 s on a connection of its own) lists the waiting sessions of the database: the
statement, the table whose row it waits for (from the tuple lock in pg_locks, or
else the table its statement changes), and what the first session blocking it
runs. pg_locks and pg_blocking_pids take the lock manager's locks for a moment, so
the sampler asks five times a second, not more, and only about sessions already
waiting.

The summary groups the waits by table and statement, statements read in their
normalized form (pg_query's normalize: constants become $n, so the same UPDATE with
other values is one statement): the share of the row-lock waits sampled, the most
sessions seen waiting at once, the mean, and the statement most often blocking.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pglast.parser import ParseError, normalize

from ..statement_kind import kind_of
from ..words import flat_query

QUERY = "advise_row_locks"
INTERVAL_S = 0.2
UNKNOWN_TABLE = UNKNOWN = "?"


def _most_seen(blockers: Counter[str]) -> str:
    """The statement seen blocking most often; a blocker that had moved on by the time
    its session was read ("?") only when no other was seen."""
    known = Counter({q: n for q, n in blockers.items() if q != UNKNOWN})
    return (known or blockers).most_common(1)[0][0]


def statement(text: str | None) -> str:
    """A statement as pg_stat_statements would show it: constants as $n (the text as it
    is where it does not parse: cut at track_activity_query_size, or hidden)."""
    if not text:
        return UNKNOWN
    try:
        return str(normalize(text)).strip()
    except ParseError:
        return text.strip()


def table_of(row: dict[str, Any]) -> str:
    """The table whose row a session waits for: its tuple lock's; else, for a wait on a
    transaction alone, the table its statement changes, among those its transaction
    writes (qualified as pg_locks names them)."""
    if row["table"]:
        return str(row["table"])
    target = _target(row["query"] or "")
    if target is None:
        return UNKNOWN_TABLE
    schema, name = target
    for written in row.get("written") or []:
        written_schema, _, written_name = str(written).partition(".")
        if _unquoted(written_name) == name and schema in (None, _unquoted(written_schema)):
            return str(written)
    return f"{schema}.{name}" if schema else name


def _target(query: str) -> tuple[str | None, str] | None:
    """The (schema, table) an UPDATE, DELETE, INSERT or MERGE changes."""
    kind = kind_of(query)
    return kind.relation if kind.parsed and kind.statements == 1 else None


def _unquoted(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def summarize(samples: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per (table, waiting statement), the most waited first."""
    waits: Counter[tuple[str, str]] = Counter()
    most: Counter[tuple[str, str]] = Counter()
    seen_in: Counter[tuple[str, str]] = Counter()
    blocking: dict[tuple[str, str], Counter[str]] = {}
    events: dict[tuple[str, str], Counter[str]] = {}
    for sample in samples:
        at_once: Counter[tuple[str, str]] = Counter()
        for row in sample:
            key = (table_of(row), statement(row["query"]))
            at_once[key] += 1
            blocking.setdefault(key, Counter())[statement(row["blocking_query"])] += 1
            events.setdefault(key, Counter())[str(row["wait_event"])] += 1
        for key, n in at_once.items():
            waits[key] += n
            most[key] = max(most[key], n)
            seen_in[key] += 1
    total = sum(waits.values())
    out = []
    for (table, query), n in waits.most_common():
        blocker = _most_seen(blocking[(table, query)])
        kinds = events[(table, query)]
        out.append(
            {
                "table": table,
                "query": query,
                "waiting_samples": n,
                "share": n / total,
                "sessions_max": most[(table, query)],
                "sessions_mean": n / seen_in[(table, query)],
                "blocking_query": blocker,
                "blocking_short": flat_query(blocker, 60),
                "wait_events": ", ".join(
                    f"{event} {count / n:.0%}" for event, count in kinds.most_common()
                ),
                "samples": len(samples),
            }
        )
    return out


def statements_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The statements behind a hot-rows finding: the one waiting, the one holding."""
    return [
        {
            "query": row["query"],
            "said": f"waits for a row of {row['table']} ({row['wait_events']}); "
            f"{row['sessions_mean']:.1f} sessions at once on average, "
            f"{row['sessions_max']} at most",
        },
        {
            "query": row["blocking_query"],
            "said": "the statement most often blocking it"
            if row["blocking_query"] != UNKNOWN
            else "the statement blocking it was not seen: its session had moved on when read",
        },
    ]
