"""The keylookup lab at --quick scale: its checks pass and its data facts say what
the article says (CLUSTER makes a key's rows adjacent, updates without fillfactor
scatter them again). Facts about the data only, never timings."""

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pgopt.cli import main
from pgopt.store import load_document

# one keylookup run for the module's tests
pytestmark = pytest.mark.xdist_group("keylookup")

# Every step but the two *_big_buffers ones, which only restart the server with
# another shared_buffers; the baseline is always included.
STEPS = "cluster,jsonb,array,covering,brin,updated_ff100,updated_ff80"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    # The unprivileged server user must be able to enter the work folder.
    workdir = Path(tempfile.mkdtemp(prefix="pgopt-test-", dir="/var/tmp"))
    workdir.chmod(0o755)
    out = tmp_path_factory.mktemp("keylookup") / "out"
    try:
        code = main(
            [
                "lab",
                "run",
                "keylookup",
                "--quick",
                "--steps",
                STEPS,
                "--duration",
                "1",
                "--reps",
                "1",
                "--workdir",
                str(workdir),
                "--out",
                str(out),
            ]
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert code == 0
    data: dict[str, Any] = load_document(out)
    return data


def facts(result: dict[str, Any], step: str) -> dict[str, str]:
    found: dict[str, str] = {s["name"]: s["facts"] for s in result["steps"]}[step]
    return found


def number(result: dict[str, Any], step: str, name: str) -> float:
    return float(facts(result, step)[name])


def test_every_step_ran_and_every_check_passed(result: dict[str, Any]) -> None:
    names = [s["name"] for s in result["steps"]]
    assert names == ["baseline", *STEPS.split(",")]
    assert result["passed"] is True
    for step in result["steps"]:
        checks = {c["name"]: c["passed"] for c in step["checks"]}
        assert all(checks.values()), (step["name"], step["checks"])
        assert any(name.startswith("all eight layouts") for name in checks)
        assert step["metric"]["unit"] == "queries/s"
        assert step["metric"]["median"] > 0


def test_cluster_makes_the_key_adjacent(result: dict[str, Any]) -> None:
    assert number(result, "baseline", "correlation") < 0.5
    assert number(result, "cluster", "correlation") > 0.99
    # A key's ~10,000 rows: on every page of the random table at this scale, on
    # ~64 adjacent pages after CLUSTER.
    assert number(result, "cluster", "heap_pages_per_key") * 4 < number(
        result, "baseline", "heap_pages_per_key"
    )
    assert number(result, "cluster", "buffers_per_query") * 4 < number(
        result, "baseline", "buffers_per_query"
    )
    assert facts(result, "baseline")["plan"] in ("Bitmap Heap Scan", "Index Scan")


def test_covering_index_skips_the_random_heap(result: dict[str, Any]) -> None:
    covering = facts(result, "covering")
    assert covering["plan"] == "Index Only Scan"
    assert float(covering["heap_fetches_per_query"]) == 0
    assert number(result, "covering", "correlation") < 0.5
    assert number(result, "covering", "buffers_per_query") * 4 < number(
        result, "baseline", "buffers_per_query"
    )


def test_brin_is_a_fraction_of_the_btree(result: dict[str, Any]) -> None:
    assert facts(result, "brin")["plan"] == "Bitmap Heap Scan"
    assert number(result, "brin", "index_kb") * 10 < number(result, "brin", "btree_index_kb")


def test_aggregated_layouts_are_small_and_jsonb_sends_more(result: dict[str, Any]) -> None:
    for step in ("jsonb", "array"):
        assert number(result, step, "table_mb") < number(result, "cluster", "table_mb")
        assert number(result, step, "buffers_per_query") < number(
            result, "cluster", "buffers_per_query"
        )
    if facts(result, "jsonb")["output_kb"] != "n/a":  # SERIALIZE: PostgreSQL 17+
        assert number(result, "jsonb", "output_kb") > number(result, "cluster", "output_kb")
        assert number(result, "array", "output_kb") < number(result, "jsonb", "output_kb")


def test_fillfactor_keeps_updates_on_the_page(result: dict[str, Any]) -> None:
    ff100, ff80 = facts(result, "updated_ff100"), facts(result, "updated_ff80")
    assert float(ff80["hot_update_share"]) >= 0.95
    assert float(ff100["hot_update_share"]) < float(ff80["hot_update_share"])
    assert float(ff100["correlation"]) < float(ff80["correlation"])
    assert float(ff80["correlation"]) > 0.99
    # Rows moved off their pages: more pages per key than right after CLUSTER.
    assert float(ff100["heap_pages_per_key"]) > number(result, "cluster", "heap_pages_per_key")
    # fillfactor 80 costs space: a bigger table than fillfactor 100.
    assert float(ff80["table_mb"]) > float(ff100["table_mb"])
