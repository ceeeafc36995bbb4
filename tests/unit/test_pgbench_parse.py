"""The pgbench parsers against real output captured from pgbench 10 (article), 15 and 18."""

from pathlib import Path

import pytest

from pgopt.errors import BenchError
from pgopt.pgbench.parse import (
    abort_message,
    parse_aggregate_line,
    parse_summary,
    percentile,
)

DATA = Path(__file__).parent.parent / "data" / "pgbench"


def read(name: str) -> str:
    return (DATA / name).read_text()


@pytest.mark.parametrize("version", ["15", "18"])
def test_duration_run_with_statement_latencies(version: str) -> None:
    s = parse_summary(read(f"pg{version}-tpcb-T.stdout"))
    assert s.query_mode == "prepared"
    assert (s.clients, s.threads, s.duration_s) == (2, 2, 3.0)
    assert s.transactions > 1000 and s.transactions_target is None
    assert s.failed == 0
    assert s.tps_kind == "without initial connection time"
    assert s.latency_avg_ms is not None and s.latency_stddev_ms is not None
    assert s.initial_connection_ms is not None
    # tps agrees with transactions / duration to within connection start-up
    assert s.duration_s is not None
    assert s.tps == pytest.approx(s.transactions / s.duration_s, rel=0.02)
    commands = [st.command for st in s.statements]
    assert len(commands) == 11 and commands[4] == "BEGIN;" and commands[-1] == "END;"
    assert all(st.failures == 0 for st in s.statements)


def test_exact_values_pg15() -> None:
    s = parse_summary(read("pg15-tpcb-T.stdout"))
    assert s.tps == pytest.approx(2342.217257)
    assert s.transactions == 7021
    assert s.latency_avg_ms == pytest.approx(0.853)
    assert s.statements[5].latency_ms == pytest.approx(0.095)


@pytest.mark.parametrize("version", ["15", "18"])
def test_weighted_scripts_and_transaction_count(version: str) -> None:
    s = parse_summary(read(f"pg{version}-weighted-t.stdout"))
    assert s.transactions == 400 and s.transactions_target == 400
    assert s.transaction_type == "multiple scripts"
    assert [sc.weight for sc in s.scripts] == [3, 1]
    assert sum(sc.transactions or 0 for sc in s.scripts) == 400
    assert all(sc.tps is not None and sc.tps > 0 for sc in s.scripts)
    assert {st.script for st in s.statements} == {1, 2}
    assert s.statements[1].command.startswith("SELECT abalance")


@pytest.mark.parametrize("version", ["15", "18"])
def test_connect_per_transaction(version: str) -> None:
    s = parse_summary(read(f"pg{version}-connect-C.stdout"))
    assert s.tps_kind == "including reconnection times"
    assert s.initial_connection_ms is not None  # "average connection time"


def test_pgbench_10_two_tps_lines_takes_excluding() -> None:
    s = parse_summary(read("pg10-article-000-login.stdout"))
    assert s.tps == pytest.approx(312.550425)
    assert "excluding" in s.tps_kind
    assert s.failed == 0
    assert [st.latency_ms for st in s.statements] == [0.002, 0.209, 12.635, 12.737]
    assert s.statements[0].failures is None


def test_article_queue_report_pg15() -> None:
    s = parse_summary(read("pg15-article-001-queue.stdout"))
    assert s.tps == pytest.approx(25379.081141)
    assert (s.transactions, s.transactions_target) == (999936, 999936)
    assert s.statements[0].command == "with tmp as"


@pytest.mark.parametrize("version", ["15", "18"])
def test_aborted_run_has_no_tps_and_a_reason(version: str) -> None:
    with pytest.raises(BenchError):
        parse_summary(read(f"pg{version}-aborted.stdout"))
    reason = abort_message(read(f"pg{version}-aborted.stderr").splitlines())
    assert reason is not None and "division by zero" in reason


def test_no_abort_in_a_clean_run() -> None:
    assert abort_message(read("pg15-tpcb-T.stderr").splitlines()) is None


@pytest.mark.parametrize("version", ["15", "18"])
def test_aggregate_log(version: str) -> None:
    rows = [
        parse_aggregate_line(ln, int(version))
        for ln in read(f"pg{version}-aggregate.log").splitlines()
    ]
    assert rows and all(r is not None for r in rows)
    first = rows[0]
    assert first is not None and first.transactions > 0 and first.failures == 0
    assert first.latency_min_us <= first.latency_max_us
    assert first.latency_avg_ms is not None and first.latency_avg_ms > 0


def test_aggregate_before_15_has_no_failures() -> None:
    row = parse_aggregate_line("1795312948 10 1000 200000 50 300 10 20 1 5", 14)
    assert row is not None and row.failures is None


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([5], 99) == 5
    assert percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)
    assert percentile(list(range(101)), 95) == pytest.approx(95)
