"""result.json against its schema: stored results, new ones, and broken ones."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pgopt.errors import UsageError
from pgopt.result import build_result
from pgopt.store import load_result, schema_problem

from .test_result import outcome_with

RESULTS = Path(__file__).parent.parent / "data" / "results"


@pytest.mark.parametrize("folder", sorted(p.name for p in RESULTS.iterdir()))
def test_every_stored_result_validates(folder: str) -> None:
    assert schema_problem(json.loads((RESULTS / folder / "result.json").read_text())) is None


def test_a_new_result_validates(tmp_path: Path) -> None:
    medians = dict.fromkeys(("baseline", "async", "cluster", "sweep-c1", "sweep-c4"), 1.0)
    result = build_result(outcome_with(tmp_path / "lab", medians), command="pgopt lab run x")
    assert schema_problem(json.loads(json.dumps(result, default=str))) is None


def test_a_broken_result_is_refused_with_where_and_what(tmp_path: Path) -> None:
    good: dict[str, Any] = json.loads((RESULTS / "smoke-a" / "result.json").read_text())
    broken = copy.deepcopy(good)
    broken["steps"][1]["verdict_vs_previous"] = "quicker"
    problem = schema_problem(broken)
    assert problem is not None and problem.startswith("steps/1/verdict_vs_previous:")
    (tmp_path / "result.json").write_text(json.dumps(broken))
    with pytest.raises(UsageError, match=r"not a valid pgopt\.lab-result/1 result: steps/1"):
        load_result(tmp_path)
