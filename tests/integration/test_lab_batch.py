"""The `batch` lab (seed 002) end to end at a tiny scale: every profile runs the
same timed phases, every check holds, and the memory profile's formulas are
resolved from --ram 8GB (the article's machine) to the values the article's
rules give. No performance thresholds: only what must hold on any machine.
"""

import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pgopt.cli import main
from pgopt.store import load_document

# one batch run for the module's tests
pytestmark = pytest.mark.xdist_group("batch")

PHASES = ["restore", "indexes", "magic_update", "string_updates", "magic_select"]
# The article's memory rules for 8 GB (8192 MB): shared_buffers RAM/4,
# work_mem min(RAM/64, 3*RAM/400), maintenance_work_mem RAM/16,
# effective_cache_size RAM - shared_buffers.
MEMORY_8GB = {
    "shared_buffers": "2048MB",
    "temp_buffers": "256MB",
    "work_mem": "61MB",
    "maintenance_work_mem": "512MB",
    "effective_cache_size": "6144MB",
}
DISK = {
    "effective_io_concurrency": "2",
    "random_page_cost": "2",
    "bgwriter_delay": "60ms",
    "bgwriter_lru_multiplier": "4",
    "bgwriter_lru_maxpages": "400",
}
CHECKS = {
    "the restore brought back every row (updates keep the row counts)",
    "every update changed exactly the expected rows",
    "no letter 'a' is left in the strings",
    "magic_select answers the same in every profile",
    "the tables hold the same data in every profile",
}


@pytest.fixture(scope="module")
def batch_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="pgopt-test-", dir="/var/tmp"))
    workdir.chmod(0o755)
    out = tmp_path_factory.mktemp("batch") / "out"
    try:
        code = main(
            [
                "lab",
                "run",
                "batch",
                "--quick",
                "--reps",
                "1",
                "--ram",
                "8GB",
                "--workdir",
                str(workdir),
                "--out",
                str(out),
            ]
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert code == 0
    assert not list(out.glob("*.dump")), "the dataset dump is removed when the run ends"
    result: dict[str, Any] = load_document(out)
    return result


def test_every_profile_runs_the_phases_and_passes_its_checks(batch_result: dict[str, Any]) -> None:
    steps = batch_result["steps"]
    assert [s["name"] for s in steps][:4] == ["defaults", "memory", "disk", "bgwriter_400ms"]
    assert len(steps) == 5  # the article's four profiles and ours
    assert batch_result["passed"]
    for step in steps:
        assert [p["name"] for p in step["phases"]] == PHASES, step["name"]
        for phase in step["phases"]:
            assert len(phase["samples"]) == 1 and all(s > 0 for s in phase["samples"])
        for run in step["runs"]:
            assert [p["name"] for p in run["phases"]] == PHASES
            # the metric is the sum of the timed phases (the reset phase is untimed)
            assert run["value"] == pytest.approx(sum(p["seconds"] for p in run["phases"]), abs=0.01)
        names = [c["name"] for c in step["checks"]]
        assert set(names) == CHECKS and len(names) == len(CHECKS), step["name"]
        assert all(c["passed"] for c in step["checks"]), step["checks"]
        assert step["metric"]["unit"] == "s" and not step["metric"]["higher_is_better"]


def test_memory_profile_follows_the_articles_formulas_for_8gb(
    batch_result: dict[str, Any],
) -> None:
    assert batch_result["params"]["ram_bytes"] == 8 * 2**30
    steps = {s["name"]: s for s in batch_result["steps"]}
    assert steps["defaults"]["settings"] == {}
    assert steps["memory"]["settings"] == MEMORY_8GB
    assert steps["disk"]["settings"] == {**MEMORY_8GB, **DISK}
    assert steps["bgwriter_400ms"]["settings"] == {
        **MEMORY_8GB,
        **DISK,
        "bgwriter_delay": "400ms",
    }
    ours = batch_result["steps"][4]
    assert ours["note"], "our profile says why it was chosen"
    for name, value in steps["bgwriter_400ms"]["settings"].items():
        assert name in ours["settings"], name
        if name not in ours["changes"].get("settings", {}):
            assert ours["settings"][name] == value


def test_each_phase_has_its_own_waits_and_wal(batch_result: dict[str, Any]) -> None:
    for step in batch_result["steps"]:
        for run in step["runs"]:
            phases = {p["name"]: p for p in run["phases"]}
            # WAL is logged for what every phase writes (wal_level = replica)
            for name in ("restore", "indexes", "magic_update", "string_updates"):
                assert phases[name]["wal_bytes"] > 0, (step["name"], name)
            # a sample belongs to one phase at most, and to the run it was taken in
            by_phase: Counter[str] = Counter()
            for phase in phases.values():
                by_phase.update(phase["waits"])
            assert all(n <= run["waits"].get(event, 0) for event, n in by_phase.items())
        for phase in step["phases"]:
            assert phase["wal_bytes"] >= 0 and phase["why"], (step["name"], phase["name"])
