"""pgbouncer beside the embedded server: logins through it keep at most its pool's
server connections, and nothing of it is left after the run."""

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

import pytest

from pgopt.cli import main
from pgopt.servers import pooler
from pgopt.servers.base import Target
from pgopt.servers.reaping import reap_stale
from pgopt.store import load_document

from .conftest import pgopt_processes

PGBOUNCER = "pgbouncer.ini"  # in pgbouncer's command line (the test's name holds "pgbouncer")
needs_pgbouncer = pytest.mark.skipif(
    pooler.pgbouncer_path() is None, reason=f"pgbouncer is not installed ({pooler.INSTALL_HINT})"
)


@needs_pgbouncer
def test_pooled_logins_share_the_pools_server_connections(tmp_path: Path, workdir: Path) -> None:
    out = tmp_path / "login"
    args = ["lab", "run", "login", "--quick", "--reps", "1", "--duration", "1"]
    args += ["--steps", "connect_extended,pooled", "--workdir", str(workdir), "--out", str(out)]
    assert main(args) == 0
    result = load_document(out)
    steps = {s["name"]: s for s in result["steps"]}
    assert list(steps) == ["baseline", "connect_extended", "pooled"]
    assert result["passed"] is True and not result["skipped"]
    pooled = steps["pooled"]
    assert pooled["changes"]["pooler"] == "pgbouncer"
    assert all(run["transactions"] > 0 and run["failed"] == 0 for run in pooled["runs"])
    pool_size = 2 * result["params"]["cpus"]
    for run in pooled["runs"]:
        backends = [count for _, count in run["monitor"]["backends"]]
        assert backends and max(backends) <= pool_size  # pgbouncer's pool, not 8 clients
    assert not pgopt_processes(str(workdir))  # pgbouncer went with the server
    assert not list(workdir.glob("pgopt-*"))


def test_a_pooler_needs_pgopts_own_server() -> None:
    not_embedded = cast(Target, object())
    reason = pooler.unavailable(not_embedded)
    assert reason is not None and "embedded" in reason


def test_without_pgbouncer_the_step_is_skipped_with_its_reason(
    tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pooler, "pgbouncer_path", lambda: None)
    out = tmp_path / "login"
    args = ["lab", "run", "login", "--quick", "--reps", "1", "--duration", "1"]
    args += ["--steps", "pooled", "--workdir", str(workdir), "--out", str(out)]
    assert main(args) == 0
    result = load_document(out)
    assert [s["name"] for s in result["steps"]] == ["baseline"]
    assert result["skipped"] == [
        {"name": "pooled", "reason": f"pgbouncer is not installed ({pooler.INSTALL_HINT})"}
    ]


@needs_pgbouncer
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_no_pgbouncer_outlives_pgopt(sig: signal.Signals, workdir: Path, tmp_path: Path) -> None:
    """Ctrl-C stops pgbouncer with the server; after a SIGKILL of pgopt, the next run's
    reaping does."""
    argv = [sys.executable, "-m", "pgopt", "lab", "run", "login", "--quick", "--reps", "1"]
    argv += ["--steps", "pooled", "--duration", "30", "--workdir", str(workdir)]
    proc = subprocess.Popen(
        [*argv, "--out", str(tmp_path / "run")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 90
    while not any(PGBOUNCER in p for p in pgopt_processes(str(workdir))):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("pgbouncer never started: " + (proc.stderr.read() if proc.stderr else ""))
        time.sleep(0.2)
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    if sig == signal.SIGKILL:
        assert any(PGBOUNCER in p for p in pgopt_processes(str(workdir)))  # orphaned
        reap_stale(workdir)
    assert pgopt_processes(str(workdir)) == []
    assert list(workdir.iterdir()) == []
