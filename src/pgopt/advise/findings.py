"""Rules applied to the evidence (pure): rates over the sample, wait shares, the SQL
check of a statement's text, derived figures, thresholds; a finding per row that
meets them, or the reason a rule could not be checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..words import flat_query
from . import row_locks
from .rules import Rule, Severity
from .sql_checks import FILTERS

IDLE_BUCKETS = frozenset({"client:clientread", "idleintransaction"})
STATS_HISTORY_S = 7 * 86_400  # pgdoctor: statistics younger than 7 days prove no absence
HISTORY_SOURCE = "pgdoctor: statistics younger than 7 days prove no absence"


@dataclass(frozen=True)
class Evidence:
    """What the evidence is worth: its age, what this role can see, the sample."""

    version_num: int
    stats_age_s: float
    uptime_s: float
    stats_visible: bool
    statements: bool
    never_analyzed: tuple[str, ...]
    sample_s: float
    waits: Counter[str] = field(default_factory=Counter)
    pgstattuple: bool = False
    tables: int = 1  # the database's tables (pg_stat_user_tables)
    tables_with_rows: int = 1

    @property
    def major(self) -> int:
        return self.version_num // 10000


@dataclass(frozen=True)
class Finding:
    rule: Rule
    message: str
    fix: str
    evidence: dict[str, Any]
    caveat: str | None = None  # what the evidence cannot yet prove (young statistics)
    statements: tuple[dict[str, Any], ...] = ()  # the statements behind it, each `said`

    @property
    def severity(self) -> Severity:
        return self.rule.severity


@dataclass(frozen=True)
class NotChecked:
    rule: Rule
    reason: str


@dataclass(frozen=True)
class Readings:
    evidence: Evidence
    before: dict[str, list[dict[str, Any]]]  # query name -> rows
    after: dict[str, list[dict[str, Any]]]
    failed: dict[str, str]  # query name -> the server's reason


def unmet_need(rule: Rule, evidence: Evidence) -> str | None:
    """Why the evidence cannot support `rule`, or None."""
    if not rule.applies_to(evidence.major):
        return f"applies to PostgreSQL {rule.versions[0]} to {rule.versions[1]}"
    if "statements" in rule.needs and not evidence.statements:
        return (
            "pg_stat_statements is not installed in this database: add it to "
            "shared_preload_libraries, restart, and run 'create extension pg_stat_statements'"
        )
    if "pg_stats" in rule.needs and not evidence.stats_visible:
        return _no_stats(evidence)
    if "pgstattuple" in rule.needs and not evidence.pgstattuple:
        return (
            "pgstattuple is not installed in this database: run 'create extension "
            "pgstattuple' (the role needs pg_stat_scan_tables); estimates from pg_stats "
            "can be off by tens of points, so pgopt does not guess"
        )
    return young_statistics(rule, evidence)


def young_statistics(rule: Rule, evidence: Evidence) -> str | None:
    """Why statistics this young cannot prove what `rule` looks for (an absence), or None."""
    if "history" in rule.needs and evidence.stats_age_s < STATS_HISTORY_S:
        days = evidence.stats_age_s / 86_400
        return f"statistics are {days:.1f} days old ({HISTORY_SOURCE})"
    return None


def _no_stats(evidence: Evidence) -> str:
    """Why pg_stats shows this role nothing: nothing to show, or nothing it may read."""
    if not evidence.tables:
        return "the database has no tables: nothing to look at"
    if not evidence.tables_with_rows:
        return "its tables hold no rows: pg_stats has nothing to show yet"
    if len(evidence.never_analyzed) >= evidence.tables_with_rows:
        return (
            "no table with rows has been analyzed: pg_stats is empty until ANALYZE "
            "(or autovacuum's) has run"
        )
    return (
        "pg_stats shows a role only the columns it may read, and this role none: grant it "
        "SELECT on the tables (or pg_read_all_data, PostgreSQL 14+); pg_monitor is not enough"
    )


def wait_share(waits: Counter[str], events: Sequence[str]) -> float:
    """The share of sampled active backends (CPU or a wait, not idle) in `events`,
    matched without regard to case (PostgreSQL 17 renamed WALSync to WalSync)."""
    active = {k.lower(): v for k, v in waits.items() if k.lower() not in IDLE_BUCKETS}
    total = sum(active.values())
    wanted = {e.lower() for e in events}
    return sum(v for k, v in active.items() if k in wanted) / total if total else 0.0


def apply(
    rule: Rule,
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
    evidence: Evidence,
    behind: list[dict[str, Any]] | None = None,
) -> list[Finding]:
    """The findings of `rule`: `after` is the evidence at the end of the sample,
    `before` at its start (for rates; the same rows when the rule has none); `behind`,
    for a rule that names them, the statements behind its findings (behind.py)."""
    earlier = {_key(rule, row): row for row in before}
    found = []
    for row in after:
        if rule.filter is not None and not FILTERS[rule.filter](str(row.get("query", ""))):
            continue
        row = dict(row)
        if rule.rates:
            start = earlier.get(_key(rule, row))
            if start is None:
                continue  # appeared during the sample: no rate
            for name in rule.rates:
                delta = float(row[name] or 0) - float(start[name] or 0)
                row[f"{name}_per_s"] = delta / evidence.sample_s if evidence.sample_s else 0.0
        if rule.waits:
            row["wait_share"] = wait_share(evidence.waits, rule.waits)
        if "query" in row:
            row["query_short"] = flat_query(str(row["query"]), 80)
        row = rule.derive(row)
        if rule.met_by(row):
            message = _fill(rule.message, row) + _naming(rule, behind, evidence)
            statements = row_locks.statements_of(row) if rule.sampled else behind or []
            fix = _fill(rule.fix, row)
            found.append(Finding(rule, message, fix, _plain(row), None, tuple(statements)))
    return found


def _naming(rule: Rule, behind: list[dict[str, Any]] | None, evidence: Evidence) -> str:
    """The message's end for a rule that names the statements behind it."""
    if rule.behind is None:
        return ""
    if not evidence.statements:
        return " (pg_stat_statements would name the statements)"
    if not behind:
        return " (pg_stat_statements saw no write or COMMIT during the sample: functions may write)"
    top = behind[0]
    rate = f"{top['calls_per_s']:,.0f} a second"
    return f"; the statement committing most: `{top['query_short']}` ({rate})"


def _key(rule: Rule, row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row.get(k) for k in rule.key)


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def _fill(template: str, row: dict[str, Any]) -> str:
    try:
        return template.format_map(_Blank(row))
    except (ValueError, TypeError):  # a None where a number format was asked
        safe = {k: ("?" if v is None else v) for k, v in row.items()}
        return template.format_map(_Blank({k: str(v) for k, v in safe.items()}))


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """The row as JSON takes it: numbers rounded, other values as text."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, float):
            out[k] = round(v, 4)
        elif v is None or isinstance(v, int | bool | str):
            out[k] = v
        else:
            out[k] = str(v)
    return out
