"""result.json from samples: ratios against the step each step derives from, sweeps.

The result is built as records and checked as the JSON document it is written as."""

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pgopt.engine.checks import facts_over_runs
from pgopt.lab import load_lab
from pgopt.model.codec import encode
from pgopt.model.observation import PhaseObservation
from pgopt.model.outcomes import ExperimentOutcome, RunRecord, StepOutcome
from pgopt.params import resolve_params
from pgopt.report.markdown import render_markdown
from pgopt.result.build import build_result

from .test_lab_load import MINIMAL, write_lab

STEPS = ("baseline", "async", "cluster", "sweep-c1", "sweep-c4")  # write_lab's
MEDIANS = {"baseline": 100.0, "async": 200.0, "cluster": 400.0, "sweep-c1": 50.0, "sweep-c4": 110.0}


def document(outcome: ExperimentOutcome, command: str = "pgopt lab run x") -> Any:
    """The result.json document of an outcome."""
    return json.loads(json.dumps(encode(build_result(outcome, command=command))))


def outcome_with(folder: Path, medians: dict[str, float]) -> ExperimentOutcome:
    """Three runs a step, 1% either side of its median, the same in every step."""
    spread = (0.99, 1.0, 1.01)
    return outcome_of(folder, {name: [m * f for f in spread] for name, m in medians.items()})


def outcome_of(lab_folder: Path, runs: dict[str, list[float]]) -> ExperimentOutcome:
    """The outcome of the lab in `lab_folder` (written there if absent) with these runs,
    round by round."""
    lab = load_lab(lab_folder if (lab_folder / "lab.toml").exists() else write_lab(lab_folder))
    steps = [
        StepOutcome(s, runs=[RunRecord(s.name, i + 1, v) for i, v in enumerate(runs[s.name])])
        for s in lab.steps
    ]
    return ExperimentOutcome(
        lab=lab,
        params=resolve_params(lab),
        started_at="2026-01-01T00:00:00Z",
        duration_s=1.0,
        steps=steps,
        target={"kind": "embedded", "server_version": "18.6"},
        variables={},
    )


def test_verdicts_compare_with_the_step_each_derives_from(tmp_path: Path) -> None:
    # baseline -> async -> cluster; the sweep derives from the baseline (`from`)
    result = document(outcome_with(tmp_path / "lab", MEDIANS))
    steps = {s["name"]: s for s in result["steps"]}
    assert steps["baseline"]["compared_with"] is None
    assert steps["baseline"]["verdict_vs_previous"] == "n/a"
    assert steps["cluster"]["compared_with"] == "async"
    assert steps["cluster"]["verdict_vs_previous"] == "faster"
    # against the baseline (its `from`), not against cluster just above it
    assert steps["sweep-c1"]["compared_with"] == "baseline"
    assert steps["sweep-c1"]["ratio_vs_previous"]["median"] == pytest.approx(0.5)
    assert steps["sweep-c4"]["verdict_vs_previous"] == "faster"
    assert result["sweeps"] == [
        {
            "name": "sweep",
            "points": [{"clients": 1, "median": 50.0}, {"clients": 4, "median": 110.0}],
            "best_clients": 4,
            "knee_clients": 4,
        }
    ]
    assert steps["async"]["reported"]["ratio_vs_baseline"] == 2.5
    assert result["schema"] == "pgopt.lab-result/1" and result["passed"] is True


def test_each_phase_gets_a_verdict_against_the_same_phase_of_the_step_before(
    tmp_path: Path,
) -> None:
    outcome = outcome_with(tmp_path / "lab", dict.fromkeys(STEPS, 1.0))
    seconds = {"baseline": (10.0, 50.0), "async": (20.0, 49.9)}  # (restore, update)
    noise = {"baseline": (0.99, 1.0, 1.01), "async": (1.0, 1.005, 0.995)}  # per round
    for step in outcome.steps[:2]:
        restore, update = seconds[step.step.name]
        for run, f in zip(step.runs, noise[step.step.name], strict=True):
            run.phases = [("restore", restore * f), ("update", update * f)]
            run.value = (restore + update) * f
    steps = document(outcome)["steps"]
    baseline, async_ = steps[0]["phases"], steps[1]["phases"]
    assert [p["name"] for p in baseline] == ["restore", "update"]
    assert "verdict_vs_previous" not in baseline[0]
    assert async_[0]["seconds"] == 20.0
    assert async_[0]["ratio_vs_previous"]["median"] == pytest.approx(2.0, rel=0.01)
    assert async_[0]["verdict_vs_previous"] == "slower"  # twice the seconds
    assert async_[1]["verdict_vs_previous"] == "no-change"  # 90% interval within ±3%


def test_each_phase_gets_its_waits_wal_and_why_against_the_same_phase_before(
    tmp_path: Path,
) -> None:
    outcome = outcome_with(tmp_path / "lab", dict.fromkeys(STEPS, 1.0))
    # (waits of the update phase, its WAL bytes) in each of three runs
    observed = {
        "baseline": ({"CPU": 6, "LWLock:WALWrite": 4}, (9_000, 10_000, 11_000)),
        "async": ({"CPU": 10}, (2_000, 1_000, 3_000)),
    }
    for step in outcome.steps[:2]:
        waits, wal = observed[step.step.name]
        for run, wal_bytes in zip(step.runs, wal, strict=True):
            run.phases = [("update", 5.0)]
            run.observation.phases["update"] = PhaseObservation(Counter(waits), wal_bytes)
    steps = document(outcome)["steps"]
    baseline, async_ = steps[0]["phases"][0], steps[1]["phases"][0]
    assert baseline["waits"] == {"CPU": 0.6, "LWLock:WALWrite": 0.4}  # pooled over runs
    assert baseline["wal_bytes"] == 10_000  # the median run's
    assert baseline["why"] == "CPU 60%, LWLock:WALWrite 40%; WAL bytes/run 10.0k"
    assert async_["waits"] == {"CPU": 1.0} and async_["wal_bytes"] == 2_000
    assert async_["why"] == (
        "CPU 60% -> 100%; LWLock:WALWrite 40% -> 0%; WAL bytes/run 10.0k -> 2.0k"
    )
    assert steps[1]["runs"][0]["phases"] == [
        {"name": "update", "seconds": 5.0, "wal_bytes": 2_000, "waits": {"CPU": 10}}
    ]
    # a step whose phases were not observed (a result from an older pgopt) has neither
    outcome.steps[2].runs[0].phases = [("update", 5.0)]
    assert "why" not in document(outcome, "x")["steps"][2]["phases"][0]


def test_facts_of_a_fresh_step_are_the_median_over_its_runs() -> None:
    runs = [RunRecord("s", i, 1.0) for i in (1, 2, 3)]
    for run, wait, kind in zip(runs, ("215", "180", "400"), ("x", "y", "z"), strict=True):
        run.facts = {"wait_p50": wait, "kind": kind, "ratio": "0.5"}
    assert facts_over_runs(runs) == {"wait_p50": "215", "kind": "z", "ratio": "0.5"}
    assert facts_over_runs([]) == {}


def test_the_best_steps_share_of_the_ceiling_is_paired_by_round(tmp_path: Path) -> None:
    """The lab names its ceiling step: the best other step's share of it, with the
    interval of the rounds the two shared, in result.json and in the report."""
    folder = write_lab(
        tmp_path / "lab",
        MINIMAL.replace("[[steps]]", '[metric]\nceiling = "cluster"\n\n[[steps]]', 1),
    )
    runs = {
        "baseline": [100.0, 104.0, 98.0, 101.0],
        "async": [200.0, 212.0, 190.0, 205.0],  # the best consumer: about half the ceiling
        "cluster": [400.0, 420.0, 385.0, 405.0],
        "sweep-c1": [50.0, 52.0, 49.0, 51.0],
        "sweep-c4": [110.0, 112.0, 108.0, 109.0],
    }
    result = build_result(outcome_of(folder, runs), command="pgopt lab run x")
    ceiling = result.ceiling
    assert ceiling is not None
    assert (ceiling.step, ceiling.best, ceiling.rounds) == ("cluster", "async", 4)
    assert (ceiling.median, ceiling.best_median) == (402.5, 202.5)
    assert ceiling.share == pytest.approx(0.5, abs=0.01)
    assert ceiling.share_ci95[0] < ceiling.share < ceiling.share_ci95[1]
    assert ceiling.share_ci95[1] - ceiling.share_ci95[0] < 0.03  # the rounds moved together
    assert document(outcome_of(folder, runs))["ceiling"]["best"] == "async"
    text = render_markdown(result)
    assert "async reaches 50% [95% " in text and "of the ceiling cluster measures" in text


def test_a_lab_without_a_ceiling_has_none_in_its_result(tmp_path: Path) -> None:
    result = document(outcome_with(tmp_path / "lab", MEDIANS))
    assert "ceiling" not in result
