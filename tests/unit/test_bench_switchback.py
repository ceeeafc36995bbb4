"""bench/sampler_switchback.py: which of pgbench's per-second rates count for a block,
how blocks pair, and how dips are counted (pure; the bench runs on a real server)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def switchback(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))  # the bench scripts import their common module
    return importlib.import_module("sampler_switchback")


def test_a_block_drops_its_first_second_and_seconds_that_straddle_its_ends(
    switchback: ModuleType,
) -> None:
    block = switchback.Block(sampler=True, start=100.2, end=105.3)
    # pgbench's line at t covers (t - 1, t]
    seconds = [(101.0, 1.0), (102.0, 2.0), (102.3, 3.0), (104.0, 4.0), (105.3, 5.0), (105.5, 9.0)]
    # (101.0) began before the block; (102.0) is in its first second; (105.5) ends after it
    assert switchback.block_seconds(block, seconds) == [3.0, 4.0, 5.0]


def test_pairs_give_off_then_on_whatever_order_they_ran_in(switchback: ModuleType) -> None:
    block = switchback.Block
    blocks = [block(True, 0, 4), block(False, 4, 8), block(False, 8, 12), block(True, 12, 16)]
    seconds = [(3.0, 10.0), (4.0, 11.0), (7.0, 20.0), (8.0, 21.0), (11.0, 30.0), (15.0, 40.0)]
    assert switchback.pairs_of(blocks, seconds) == [([20.0, 21.0], [10.0, 11.0]), ([30.0], [40.0])]


def test_a_pair_missing_a_block_s_seconds_is_left_out(switchback: ModuleType) -> None:
    block = switchback.Block
    blocks = [block(True, 0, 4), block(False, 4, 8), block(True, 8, 12), block(False, 12, 16)]
    seconds = [(3.0, 10.0), (7.0, 20.0), (11.0, 30.0)]  # pgbench ended before the last block
    assert switchback.pairs_of(blocks, seconds) == [([20.0], [10.0])]


def test_dips_are_seconds_below_85_percent_of_the_median_second(switchback: ModuleType) -> None:
    pairs = [([100.0, 100.0, 84.0], [100.0, 86.0, 100.0]), ([50.0, 100.0], [100.0, 100.0])]
    # median 100: 84 and 50 are dips, 86 is not
    assert switchback.dip_counts(pairs) == {"off": [2, 5], "on": [0, 5]}
