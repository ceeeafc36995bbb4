"""`lab run` writes report.md and report.html next to result.json, from the same result."""

from pathlib import Path

from pgopt.cli import main
from pgopt.report.markdown import render_markdown
from pgopt.store import load_result

from .test_lab_run import write_lab


def test_lab_run_writes_both_reports(tmp_path: Path, workdir: Path) -> None:
    lab = write_lab(tmp_path / "mine")
    out = tmp_path / "out"
    argv = ["lab", "run", str(lab), "--workdir", str(workdir), "--out", str(out)]
    assert main([*argv, "--steps", "baseline", "--duration", "1", "--reps", "1"]) == 0
    result = load_result(out)
    assert (out / "report.md").read_text() == render_markdown(result)
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 2
