"""Ctrl-C or SIGTERM mid-run: no postgres or pgbench process and no data folder is
left, and the runs that finished, those of the round under way included, are kept
in a result.json that `pgopt report` reads."""

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pgopt.cli.main import main

from .conftest import pgopt_processes


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_in_the_first_round_keeps_its_finished_runs(
    sig: signal.Signals, workdir: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    command = ["lab", "run", "smoke", "--quick", "--duration", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgopt", *command, "--workdir", str(workdir), "--out", str(run_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as in a terminal: a suite started in the background (`make test &`)
        # passes SIGINT on ignored, and Python then keeps ignoring it
        preexec_fn=_default_sigint,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    first_run = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "round 1/" in line and "→" in line:
                first_run.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not first_run.wait(90):
        proc.kill()
        pytest.fail("no run finished: " + "".join(lines))
    proc.send_signal(sig)  # the second run of round 1 is starting or under way
    proc.wait(timeout=60)
    reader.join(timeout=10)
    err = "".join(lines)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert list(workdir.iterdir()) == []
    assert pgopt_processes(str(workdir)) == []
    assert pgopt_processes(str(run_dir)) == []

    stored = json.loads((run_dir / "result.json").read_text())
    assert stored["complete"] is False and stored["error"]
    runs = [run for step in stored["steps"] for run in step["runs"]]
    assert runs and all(run["round"] == 1 for run in runs)
    segment = stored["plan"]["segments"][0]
    assert segment["rounds"] == 0 and segment["stopped"].startswith("stopped in round 1")
    assert main(["report", str(run_dir), "--md"]) == 0
    assert "Incomplete run" in (run_dir / "report.md").read_text()
