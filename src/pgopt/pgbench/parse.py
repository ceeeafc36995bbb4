"""Pure parsers for pgbench's output, versions 10 to 18.

- `parse_summary`: the report pgbench prints to stdout when a run ends;
- `parse_aggregate_line`: one `--aggregate-interval` log line.

Wording changed across versions (tps "including/excluding connections
establishing" up to 12, "without initial connection time" from 13; failures and
retries from 15; per-statement failures from 15); every variant is tested on
real captured output under tests/data/pgbench/.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import BenchError

_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+|nan|inf)(?:[eE][-+]?\d+)?)"


@dataclass(frozen=True)
class StatementLatency:
    script: int
    latency_ms: float
    failures: int | None
    command: str


@dataclass(frozen=True)
class ScriptSummary:
    number: int
    name: str
    weight: int | None
    transactions: int | None
    tps: float | None


@dataclass(frozen=True)
class Summary:
    """The end-of-run report of one pgbench run."""

    transaction_type: str | None
    query_mode: str | None
    clients: int | None
    threads: int | None
    duration_s: float | None
    transactions: int
    transactions_target: int | None
    failed: int
    retried: int
    latency_avg_ms: float | None
    latency_stddev_ms: float | None
    initial_connection_ms: float | None
    tps: float
    tps_kind: str
    scripts: tuple[ScriptSummary, ...] = ()
    statements: tuple[StatementLatency, ...] = field(default=())


_TPS = re.compile(rf"^tps = {_NUM} \((?P<kind>[^)]*)\)")
_SCRIPT_HEAD = re.compile(r"^SQL script (\d+): (.*)$|^transaction type: (.*)$")
_STATEMENT = re.compile(rf"^\s+{_NUM}\s+(?:(\d+)\s+)?(\S.*)$")


def parse_summary(text: str) -> Summary:
    """Parse pgbench's stdout report; BenchError when there is no tps line."""
    values: dict[str, str] = {}
    tps: float | None = None
    tps_kind = ""
    scripts: list[ScriptSummary] = []
    statements: list[StatementLatency] = []
    script_no = 0
    in_statements = False
    pending: dict[str, str] = {}

    def close_script() -> None:
        if script_no and pending.get("name") is not None:
            scripts.append(
                ScriptSummary(
                    number=script_no,
                    name=pending["name"],
                    weight=int(pending["weight"]) if "weight" in pending else None,
                    transactions=int(pending["tx"]) if "tx" in pending else None,
                    tps=float(pending["tps"]) if "tps" in pending else None,
                )
            )

    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if in_statements:
            m = _STATEMENT.match(line)
            if m and not stripped.startswith("- ") and not stripped.startswith("SQL script"):
                statements.append(
                    StatementLatency(
                        script=max(script_no, 1),
                        latency_ms=float(m.group(1)),
                        failures=int(m.group(2)) if m.group(2) is not None else None,
                        command=m.group(3).strip(),
                    )
                )
                continue
            in_statements = False
        head = re.match(r"^SQL script (\d+): (.*)$", stripped)
        if head:
            close_script()
            pending = {"name": head.group(2)}
            script_no = int(head.group(1))
            continue
        if stripped.startswith("- weight:") and script_no:
            pending["weight"] = stripped.split(":", 1)[1].split()[0]
            continue
        # 13-17: "- 303 transactions (75.8% of total, tps = 4954.38)"
        # 18:    "- 306 transactions (76.5% of total)" then
        #        "- number of transactions actually processed: 306 (tps = 5612.52)"
        m = re.match(
            r"^- (?:number of transactions actually processed: )?(\d+)"
            r"(?: transactions)? \((?:.*tps = " + _NUM + r")?",
            stripped,
        )
        if m and script_no:
            pending["tx"] = m.group(1)
            if m.group(2) is not None:
                pending["tps"] = m.group(2)
            continue
        if "statement latencies in milliseconds" in stripped:
            in_statements = True
            continue
        m = _TPS.match(stripped)
        if m:
            kind = m.group("kind")
            # Up to 12 pgbench prints two tps lines; the one excluding connection
            # time is the one comparable with 13+'s single line.
            if tps is None or "excluding" in kind:
                tps, tps_kind = float(m.group(1)), kind
            continue
        if " = " in stripped and not stripped.startswith("-"):
            key, _, value = stripped.partition(" = ")
            values[key] = value
        elif ": " in stripped and not stripped.startswith("-"):
            key, _, value = stripped.partition(": ")
            values[key] = value
    close_script()

    if tps is None:
        raise BenchError("pgbench printed no tps line; the run did not complete")

    processed = values.get("number of transactions actually processed", "0")
    done, _, target = processed.partition("/")
    return Summary(
        transaction_type=values.get("transaction type"),
        query_mode=values.get("query mode"),
        clients=_int_or_none(values.get("number of clients")),
        threads=_int_or_none(values.get("number of threads")),
        duration_s=_leading_float(values.get("duration")),
        transactions=int(done),
        transactions_target=int(target) if target else None,
        failed=_leading_int(values.get("number of failed transactions")) or 0,
        retried=_leading_int(values.get("number of transactions retried")) or 0,
        latency_avg_ms=_leading_float(values.get("latency average")),
        latency_stddev_ms=_leading_float(values.get("latency stddev")),
        initial_connection_ms=_leading_float(
            values.get("initial connection time") or values.get("average connection time")
        ),
        tps=tps,
        tps_kind=tps_kind,
        scripts=tuple(scripts),
        statements=tuple(statements),
    )


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None


def _leading_float(text: str | None) -> float | None:
    if text is None:
        return None
    m = re.match(_NUM, text.strip())
    return float(m.group(1)) if m else None


def _leading_int(text: str | None) -> int | None:
    if text is None:
        return None
    m = re.match(r"(\d+)", text.strip())
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class AggregateInterval:
    """One `--aggregate-interval` line: transactions and latency sums for an interval."""

    interval_start: int
    transactions: int
    latency_sum_us: int
    latency_sum2_us: int
    latency_min_us: int
    latency_max_us: int
    failures: int | None

    @property
    def latency_avg_ms(self) -> float | None:
        return self.latency_sum_us / self.transactions / 1000 if self.transactions else None


def parse_aggregate_line(line: str, major: int) -> AggregateInterval | None:
    """interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
    then, from 15 on, failures (and lag, skipped, retried, retries columns).

    Before 15 the seventh field, when present, is a lag sum (with --rate): no
    failures are reported, so `failures` is None for `major` < 15.
    """
    fields = line.split()
    if len(fields) < 6 or not all(f.lstrip("-").isdigit() for f in fields[:6]):
        return None
    start, tx, s1, s2, lo, hi = (int(f) for f in fields[:6])
    failures = int(fields[6]) if major >= 15 and len(fields) > 6 else None
    return AggregateInterval(start, tx, s1, s2, lo, hi, failures)


def percentile(sorted_values: list[int] | list[float], q: float) -> float | None:
    """Linear-interpolated percentile `q` (0..100) of an ascending list."""
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return float(sorted_values[0])
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return float(sorted_values[lo]) * (1 - frac) + float(sorted_values[hi]) * frac


ABORT_MARKERS = ("Run was aborted", "aborted in command", "client aborted")


def abort_message(stderr_lines: Iterable[str]) -> str | None:
    """pgbench's own reason for an aborted run, from its stderr, or None."""
    reasons = [ln.strip() for ln in stderr_lines if ln.strip()]
    if not any(marker in ln for ln in reasons for marker in ABORT_MARKERS):
        return None
    details = [ln for ln in reasons if "error" in ln.lower() or "abort" in ln.lower()]
    return "; ".join(dict.fromkeys(details[:3])) or reasons[-1]
