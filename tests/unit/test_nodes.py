"""A cluster step's figures per node (pure): how clients are shared, each node's rate
and CPU, the model of separate machines, and the monitored series' summaries."""

import math

import pytest

from pgopt.engine.nodes import node_facts, share
from pgopt.observe.monitor import series_facts

MODEL = "model: tx/s with each node on a 2-core machine of its own"


@pytest.mark.parametrize(
    ("total", "parts", "expected"),
    [(4, 2, [2, 2]), (5, 2, [3, 2]), (3, 3, [1, 1, 1]), (7, 3, [3, 2, 2]), (1, 1, [1])],
)
def test_clients_are_shared_as_evenly_as_whole_numbers_allow(
    total: int, parts: int, expected: list[int]
) -> None:
    assert share(total, parts) == expected
    assert sum(share(total, parts)) == total


def test_each_node_gets_its_rate_cpu_share_and_cpu_per_transaction() -> None:
    # 10 s: the primary served 100,000 tx on 5 CPU-seconds, the standby 50,000 on 4
    facts = node_facts(
        ({"primary": 100.0, "standby1": 20.0}, {"primary": 105.0, "standby1": 24.0}),
        {"primary": 100_000, "standby1": 50_000},
        {"primary": 10_000.0, "standby1": 5_000.0},
        10.0,
        2,
    )
    assert facts["primary tx/s"] == "10000"
    assert facts["standby1 tx/s"] == "5000"
    assert facts["primary server CPU, % of a core"] == "50"
    assert facts["standby1 server CPU, % of a core"] == "40"
    assert facts["primary server CPU per step tx, µs"] == "33.33"  # 5 s / 150,000 tx
    # each on 2 cores of its own, sharing the work as here: the primary, 5 s per 150,000
    # step transactions, saturates first, at 2 / (5 s / 150,000) = 60,000 tx/s
    assert math.isclose(float(facts[MODEL]), 60_000)


def test_the_busiest_node_bounds_the_model() -> None:
    """A write step: the standby replays and serves no transaction, the primary spends
    more per transaction and bounds the rate."""
    facts = node_facts(
        ({"primary": 0.0, "standby1": 0.0}, {"primary": 6.0, "standby1": 2.0}),
        {"primary": 12_000},
        {"primary": 1_200.0},
        10.0,
        2,
    )
    assert "standby1 tx/s" not in facts
    assert facts["standby1 server CPU per step tx, µs"] == "166.7"
    assert math.isclose(float(facts[MODEL]), 2 * 12_000 / 6.0)


def test_without_cpu_readings_only_the_rates_remain() -> None:
    """A user's servers (--dsn): pgopt cannot read their CPU, so no model either."""
    facts = node_facts(
        ({"primary": None, "standby1": None}, {"primary": None, "standby1": None}),
        {"primary": 10, "standby1": 10},
        {"primary": 1.0, "standby1": 1.0},
        10.0,
        2,
    )
    assert facts == {"primary tx/s": "1", "standby1 tx/s": "1"}


def test_monitored_series_give_their_median_and_maximum() -> None:
    series = {
        "lag_bytes": [[0.0, 0.0], [1.0, 456.0], [2.0, 120.0], [3.0, float("nan")]],
        "empty": [[0.0, float("nan")]],
    }
    assert series_facts(series) == {"lag_bytes, median": "120", "lag_bytes, max": "456"}
