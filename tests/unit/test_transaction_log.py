"""pgbench's `-l` log read into latencies and a per-second series, on real captured
logs (pgbench 15 and 18) and on hand-made lines whose counts are worked out here."""

from pathlib import Path

import pytest

from pgopt.pgbench.transaction_log import (
    MIN_LINES_PER_SECOND,
    TransactionLog,
    read_transaction_log,
    trusted_rates,
)

DATA = Path(__file__).parent.parent / "data" / "pgbench"
START_S = 1_795_312_948  # epoch seconds of the hand-made runs below


def line(client: int, latency: str, second: int, micros: int) -> str:
    return f"{client} 1 {latency} 0 {START_S + second} {micros}"


def read(lines: list[str], *, seconds: int = 3, rate: float = 1.0) -> TransactionLog:
    return read_transaction_log(
        lines,
        started_us=START_S * 1_000_000,
        whole_seconds=seconds,
        sampling_rate=rate,
    )


@pytest.mark.parametrize("version", ["15", "18"])
def test_captured_log_every_transaction(version: str) -> None:
    lines = (DATA / f"pg{version}-transaction.log").read_text().splitlines()
    first_s = int(lines[0].split()[4])
    log = read_transaction_log(
        lines,
        started_us=first_s * 1_000_000,
        whole_seconds=2,
        sampling_rate=1.0,
    )
    assert len(log.latencies_us) == len(lines) and all(v > 0 for v in log.latencies_us)
    assert sum(s.logged for s in log.seconds) == len(lines)


def test_failed_and_skipped_are_not_committed() -> None:
    log = read(
        [
            line(0, "120", 0, 385_208),
            "0 2 failed 0 1795312948 385370 0",
            "1 1 skipped 0 1795312948 385371",
        ]
    )
    assert list(log.latencies_us) == [120]
    assert [s.logged for s in log.seconds] == [1, 0, 0]


def test_seconds_are_binned_from_the_start_and_scaled_by_the_rate() -> None:
    lines = [line(0, "100", 0, 10), line(1, "100", 0, 999_999)]  # second 1: 2 lines
    lines += [line(0, "100", 1, 0)]  # second 2: 1 line
    lines += [line(0, "100", 3, 5)]  # after the last whole second: latency only
    log = read(lines, seconds=3, rate=0.01)
    assert [(s.time_s, s.logged) for s in log.seconds] == [(1.0, 2), (2.0, 1), (3.0, 0)]
    assert [s.tps for s in log.seconds] == [200.0, 100.0, 0.0]
    assert len(log.latencies_us) == 4


def test_a_full_log_is_trusted_however_slow() -> None:
    log = read([line(0, "100", 0, 1), line(0, "100", 2, 1)], seconds=3, rate=1.0)
    assert trusted_rates(log) == [1.0, 0.0, 1.0]


def test_a_sparse_sample_is_not_trusted_a_dense_one_is() -> None:
    def second_lines(second: int, n: int) -> list[str]:
        return [line(0, "100", second, i) for i in range(n)]

    sparse = read(second_lines(0, 49) + second_lines(1, 49) + second_lines(2, 80), rate=0.5)
    assert trusted_rates(sparse) == []  # median second: 49 lines
    dense = read([x for s in range(3) for x in second_lines(s, MIN_LINES_PER_SECOND)], rate=0.5)
    assert trusted_rates(dense) == [2.0 * MIN_LINES_PER_SECOND] * 3


def test_no_seconds_no_rates() -> None:
    assert trusted_rates(read([], seconds=0)) == []
