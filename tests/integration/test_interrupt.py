"""Ctrl-C or SIGTERM mid-run: no postgres or pgbench process and no data folder is left."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import pgopt_processes


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_run_cleans_up(sig: signal.Signals, workdir: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pgopt",
            "lab",
            "run",
            "smoke",
            "--quick",
            "--duration",
            "30",
            "--workdir",
            str(workdir),
            "--out",
            str(tmp_path / "run"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as in a terminal: a suite started in the background (`make test &`)
        # passes SIGINT on ignored, and Python then keeps ignoring it
        preexec_fn=_default_sigint,
    )
    # wait until pgbench is running against the embedded server
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any("pgbench" in p for p in pgopt_processes(str(tmp_path / "run"))):
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("pgbench never started: " + (proc.stderr.read() if proc.stderr else ""))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert list(workdir.iterdir()) == []
    assert pgopt_processes(str(workdir)) == []
    assert pgopt_processes(str(tmp_path / "run")) == []
