"""The results store: atomic writes, readable files, stored runs listed oldest first."""

import json
import stat
from pathlib import Path

import pytest

from pgopt.errors import UsageError
from pgopt.model.codec import SCHEMA, decode
from pgopt.store import list_runs, load_result, new_run_dir, write_atomic, write_result

RESULTS = Path(__file__).parent.parent / "data" / "results"


def test_write_atomic_leaves_no_temporary_file_and_a_readable_mode(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    write_atomic(target, "{}\n")
    assert target.read_text() == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
    assert target.stat().st_mode & stat.S_IROTH


def test_runs_are_listed_and_bad_folders_skipped(tmp_path: Path) -> None:
    stored = json.loads((RESULTS / "smoke-a" / "result.json").read_text())
    for lab, started in (("b", "2026-01-02T00:00:00Z"), ("a", "2026-01-01T00:00:00Z")):
        run = new_run_dir(lab, tmp_path / lab)
        write_result(run, decode({**stored, "lab": lab, "started_at": started}))
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "result.json").write_text("not json")
    (tmp_path / "invalid").mkdir()
    invalid = {"schema": SCHEMA, "lab": "c", "steps": []}
    (tmp_path / "invalid" / "result.json").write_text(json.dumps(invalid))
    assert [r.result.lab for r in list_runs(tmp_path)] == ["a", "b"]


def test_load_result_refuses_other_files(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text(json.dumps({"schema": "other"}))
    with pytest.raises(UsageError, match=r"not a pgopt\.lab-result/1"):
        load_result(tmp_path)


def test_out_folder_must_be_empty(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "file").write_text("keep me")
    with pytest.raises(UsageError, match="not empty"):
        new_run_dir("smoke", tmp_path / "x")
