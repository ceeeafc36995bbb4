"""result.json and its records: the schema, the codec both ways, older files, broken ones."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pgopt.errors import UsageError
from pgopt.model.codec import DecodeError, decode, encode, schema_problem
from pgopt.model.verdict import Verdict
from pgopt.result.build import build_result
from pgopt.store import load_result

from .test_result import outcome_with

RESULTS = Path(__file__).parent.parent / "data" / "results"
STORED = sorted(p.name for p in RESULTS.iterdir())
CURRENT = "smoke-c"  # written by the current pgopt; smoke-a and -b predate verdicts


def _stored(folder: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((RESULTS / folder / "result.json").read_text())
    return document


def _as_json(document: dict[str, Any]) -> Any:
    return json.loads(json.dumps(document))


@pytest.mark.parametrize("folder", STORED)
def test_every_stored_result_validates_and_decodes(folder: str) -> None:
    document = _stored(folder)
    assert schema_problem(document) is None
    result = decode(document)
    assert [s.name for s in result.steps] == [s["name"] for s in document["steps"]]
    assert result.steps[-1].metric.samples == tuple(document["steps"][-1]["metric"]["samples"])


@pytest.mark.parametrize("folder", STORED)
def test_every_stored_result_written_back_still_validates(folder: str) -> None:
    assert schema_problem(_as_json(encode(decode(_stored(folder))))) is None


def test_a_current_result_is_written_back_exactly_as_read() -> None:
    document = _stored(CURRENT)
    assert _as_json(encode(decode(document))) == document


def test_an_older_result_reads_with_defaults_for_what_it_lacks() -> None:
    document = _stored("smoke-a")
    assert "verdicts" not in document and "waits" not in document["steps"][0]
    result = decode(document)
    assert result.verdicts is None and result.plan is None and result.reruns == ()
    assert result.steps[0].waits is None and result.steps[0].why is None
    assert result.steps[1].ratio_vs_baseline.rounds is None  # no evidence recorded then
    assert result.steps[1].verdict_vs_previous in set(Verdict)


def test_fields_from_a_newer_pgopt_are_ignored() -> None:
    document = copy.deepcopy(_stored(CURRENT))
    document["from_the_future"] = {"x": 1}
    document["steps"][0]["also_new"] = [1, 2]
    assert decode(document) == decode(_stored(CURRENT))


def test_a_new_result_validates_and_round_trips(tmp_path: Path) -> None:
    medians = dict.fromkeys(("baseline", "async", "cluster", "sweep-c1", "sweep-c4"), 1.0)
    result = build_result(outcome_with(tmp_path / "lab", medians), command="pgopt lab run x")
    document = _as_json(encode(result))
    assert schema_problem(document) is None
    assert decode(document) == decode(_as_json(encode(decode(document))))
    assert document["steps"][0]["ratio_vs_baseline"] == {"median": 1.0, "ci95": [1.0, 1.0]}
    assert "error" not in document and "phases" not in document["steps"][0]


def test_a_broken_result_is_refused_with_where_and_what(tmp_path: Path) -> None:
    broken = copy.deepcopy(_stored("smoke-a"))
    broken["steps"][1]["verdict_vs_previous"] = "quicker"
    problem = schema_problem(broken)
    assert problem is not None and problem.startswith("steps/1/verdict_vs_previous:")
    with pytest.raises(DecodeError, match="steps/1/verdict_vs_previous"):
        decode(broken)
    (tmp_path / "result.json").write_text(json.dumps(broken))
    with pytest.raises(UsageError, match=r"not a valid pgopt\.lab-result/1 result: steps/1"):
        load_result(tmp_path)
