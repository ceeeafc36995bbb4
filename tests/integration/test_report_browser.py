"""report.html in a real browser: headless Chromium loads it, draws it, logs nothing.

Needs the Debian package `chromium` (`make packages` installs it); skips otherwise.
The page is rendered from a stored smoke result whose step title holds a
`<script>` tag: had escaping failed, the page's Content-Security-Policy would
refuse the script and Chromium would log that refusal as a console message.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pgopt.model.codec import decode
from pgopt.report.write import write_reports

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
RESULT = Path(__file__).parent.parent / "data" / "results" / "smoke-a" / "result.json"
HOSTILE_TITLE = "<script>console.error('injected')</script> select-only"
STEP_BLUE = (0x4E, 0x79, 0xA7)  # the baseline's colour in every plot

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
    ),
]


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One headless Chromium run with a fresh profile, offline, as root or not."""
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("run")
    result = json.loads(RESULT.read_text())
    result["steps"][2]["title"] = HOSTILE_TITLE
    for step in result["steps"]:  # six seconds a run: a course the throughput plot draws
        for run in step["runs"]:
            run["progress"] = [[t, run["tps"] * (0.95 + 0.02 * t)] for t in range(1, 7)]
    (run_dir / "result.json").write_text(json.dumps(result))
    write_reports(run_dir, decode(result), markdown=False)
    return run_dir / "report.html"


def test_page_has_its_plots_and_no_console_messages(report: Path, tmp_path: Path) -> None:
    done = chromium(
        tmp_path / "profile", "--enable-logging=stderr", "--v=0", "--dump-dom", report.as_uri()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [ln for ln in done.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert console == []
    dom = done.stdout
    assert dom.count("<svg") == 3  # median bars, throughput over time, latency
    assert dom.count("<figure") == 3
    assert "<script" not in dom
    assert "&lt;script&gt;console.error('injected')&lt;/script&gt; select-only" in dom


def test_screenshot_shows_the_plots(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = chromium(
        tmp_path / "profile", "--window-size=1200,2400", f"--screenshot={shot}", report.as_uri()
    )
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.size == (1200, 2400)
        pixels = np.asarray(image.convert("RGB"), dtype=int)
    blue = (np.abs(pixels - STEP_BLUE) <= 6).all(axis=2).sum()
    white = (pixels == 255).all(axis=2).sum()
    assert blue > 2000, "the baseline's bars and lines are not drawn"
    assert white < 0.95 * pixels.shape[0] * pixels.shape[1], "the page is blank"
