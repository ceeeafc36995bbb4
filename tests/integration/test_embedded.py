"""The embedded target: start, settings by reload and restart, stop, cleanup."""

import os
import shutil
import signal
import socket
import time
from pathlib import Path

import pytest

from pgopt.binaries import PgBinaries
from pgopt.errors import SettingsError, TargetError
from pgopt.servers.embedded import EmbeddedTarget

from .conftest import pgopt_processes


def show(target: EmbeddedTarget, name: str) -> str:
    with target.connect() as conn:
        row = conn.execute(f"show {name}").fetchone()
    assert row is not None
    return str(row[0])


def test_lifecycle_settings_and_cleanup(binaries: PgBinaries, workdir: Path) -> None:
    with EmbeddedTarget(binaries, workdir=workdir) as target:
        root = target.root
        assert root is not None and root.parent == workdir
        assert target.server_version.startswith(binaries.version.split(".")[0])
        assert show(target, "shared_preload_libraries") == "pg_stat_statements"
        postmaster_pid = int((target.data_dir / "postmaster.pid").read_text().split()[0])

        # reload: a session-level setting
        changes = target.apply_settings({"synchronous_commit": "off"})
        assert [c.needs_restart for c in changes] == [False]
        assert show(target, "synchronous_commit") == "off"
        same_pid = int((target.data_dir / "postmaster.pid").read_text().split()[0])
        assert same_pid == postmaster_pid

        # restart: a postmaster-level setting; the earlier one is kept
        changes = target.apply_settings({"synchronous_commit": "off", "shared_buffers": "64MB"})
        assert [c.name for c in changes] == ["shared_buffers"] and changes[0].needs_restart
        assert show(target, "shared_buffers") == "64MB"
        new_pid = int((target.data_dir / "postmaster.pid").read_text().split()[0])
        assert new_pid != postmaster_pid

        # back to defaults: both reset
        target.apply_settings({})
        assert show(target, "synchronous_commit") == "on"
        assert show(target, "shared_buffers") == "128MB"

        with pytest.raises(SettingsError, match="unknown setting 'no_such_setting'"):
            target.apply_settings({"no_such_setting": "1"})
        with pytest.raises(SettingsError, match="work_mem"):
            target.apply_settings({"work_mem": "lots"})
    assert not root.exists()
    assert pgopt_processes(str(root)) == []


def test_exception_inside_stops_and_removes(binaries: PgBinaries, workdir: Path) -> None:
    with pytest.raises(RuntimeError), EmbeddedTarget(binaries, workdir=workdir) as target:
        root = target.root
        raise RuntimeError("boom")
    assert root is not None and not root.exists()
    assert pgopt_processes(str(root)) == []


def test_failed_start_shows_the_server_log(binaries: PgBinaries, workdir: Path) -> None:
    target = EmbeddedTarget(binaries, workdir=workdir, base_settings={"shared_buffers": "1kB"})
    with pytest.raises(TargetError) as e, target:
        pass
    assert "did not start" in str(e.value)
    assert "shared_buffers" in str(e.value)  # the log line that says why
    assert list(workdir.iterdir()) == []


def test_keep_leaves_the_server_running(binaries: PgBinaries, workdir: Path) -> None:
    said: list[str] = []
    with EmbeddedTarget(binaries, workdir=workdir, keep=True, say=said.append) as target:
        root = target.root
    assert root is not None and root.exists()
    assert any("psql" in s and "stop it with" in s for s in said)
    assert pgopt_processes(str(root))
    # stop it the way a user would (fast shutdown), then remove its folder
    pid = int((root / "data" / "postmaster.pid").read_text().split()[0])
    os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + 30
    while pgopt_processes(str(root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    shutil.rmtree(root)
    assert pgopt_processes(str(root)) == []


def test_stale_folder_of_a_killed_pgopt_is_reaped(binaries: PgBinaries, workdir: Path) -> None:
    stale = workdir / "pgopt-stale"
    stale.mkdir()
    (stale / "owner.pid").write_text("999999999\n")
    with EmbeddedTarget(binaries, workdir=workdir) as target:
        assert not stale.exists()
        assert target.root is not None


def test_unreachable_workdir_is_a_clear_error(binaries: PgBinaries, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root hands the server to another user")
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    with (
        pytest.raises(TargetError, match="not reachable by the server user"),
        EmbeddedTarget(binaries, workdir=private),
    ):
        pass


def test_a_port_taken_before_the_server_binds_it_is_replaced(
    binaries: PgBinaries, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two pgopt runs at once (or a test suite's workers) may choose the same free port:
    the second server starts again on another instead of failing."""
    from pgopt.servers import embedded

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = int(busy.getsockname()[1])
        first = iter([taken])
        choose = embedded.free_port
        monkeypatch.setattr(embedded, "free_port", lambda: next(first, None) or choose())
        with EmbeddedTarget(binaries, workdir=workdir) as server:
            assert server.port != taken
            with server.connect("postgres") as conn:
                assert conn.execute("select 1").fetchone() == (1,)
