"""Write a run's reports (report.md, report.html) into its folder, atomically."""

from __future__ import annotations

from pathlib import Path

from ..model.result import LabResult
from ..store import write_atomic
from .markdown import render_markdown

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"


def write_reports(
    run_dir: Path, result: LabResult, *, markdown: bool = True, html: bool = True
) -> list[Path]:
    """Render the chosen reports from `result` into `run_dir`; return the paths written."""
    written = []
    if markdown:
        path = run_dir / MARKDOWN_FILE
        write_atomic(path, render_markdown(result))
        written.append(path)
    if html:
        # matplotlib takes a second to import: only commands that draw pay for it
        from .html import render_html

        path = run_dir / HTML_FILE
        write_atomic(path, render_html(result))
        written.append(path)
    return written
