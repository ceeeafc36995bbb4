"""bench/own_cpu.py: pgopt's share of one core, read from a result.json's runs."""

from __future__ import annotations

import pytest
from bench.own_cpu import core_shares


def test_each_run_gives_pgopt_cpu_over_pgbench_wall_time() -> None:
    result = {
        "steps": [
            {"runs": [{"observer": {"pgopt_cpu_s": 0.05, "pgbench_wall_s": 10.0}}]},
            {
                "runs": [
                    {"observer": {"pgopt_cpu_s": 0.2, "pgbench_wall_s": 20.0}},
                    {"observer": {"pgopt_cpu_s": None, "pgbench_wall_s": 20.0}},  # not read
                    {"observer": None},  # a run without pgbench (a batch's phases)
                    {},
                ]
            },
        ]
    }
    assert core_shares(result) == pytest.approx([0.005, 0.01])


def test_a_result_without_runs_gives_nothing() -> None:
    assert core_shares({"steps": []}) == []
    assert core_shares({}) == []
