"""Hot standbys: pgopt's own (pg_basebackup beside its embedded primary) replay what
the primary writes and leave nothing behind; the replicas lab runs on them, and on a
user's primary and standby given by --dsn and --standby-dsn."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.base import BENCH_APPLICATION
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.servers.standby import EmbeddedStandby, wait_for_replay
from pgopt.store import load_document

from .conftest import pgopt_processes

POSTMASTER = "/postgres -D "  # in a postmaster's command line


def test_a_row_written_on_the_primary_is_read_on_the_standby(
    binaries: PgBinaries, workdir: Path
) -> None:
    with EmbeddedTarget(binaries, workdir=workdir) as primary:
        with EmbeddedStandby(primary, 1) as standby:
            with primary.connect() as conn:
                conn.execute("create table written (n int)")
                conn.execute("insert into written values (42)")
            assert wait_for_replay(primary, standby, 10.0) < 10.0
            with standby.connect() as conn:
                assert conn.execute("select n from written").fetchall() == [(42,)]
                assert conn.execute("select pg_is_in_recovery()").fetchone() == (True,)
            with primary.connect("postgres") as conn:
                row = conn.execute(
                    "select application_name, state from pg_stat_replication"
                ).fetchone()
                assert row == ("standby1", "streaming")
            assert len([p for p in pgopt_processes(str(workdir)) if POSTMASTER in p]) == 2
        with primary.connect("postgres") as conn:  # the standby took its slot with it
            assert conn.execute("select count(*) from pg_replication_slots").fetchone() == (0,)
    assert pgopt_processes(str(workdir)) == []
    assert list(workdir.iterdir()) == []


def test_the_replicas_lab_reports_each_node_the_lag_and_what_readers_see(
    tmp_path: Path, workdir: Path
) -> None:
    out = tmp_path / "replicas"
    steps = "reads_spread,writes,read_your_writes_apply,standby_conflicts,standby_feedback"
    args = ["lab", "run", "replicas", "--quick", "--reps", "2", "--duration", "2"]
    assert main([*args, "--steps", steps, "--workdir", str(workdir), "--out", str(out)]) == 0
    result = load_document(out)
    steps_run = {s["name"]: s for s in result["steps"]}
    assert list(steps_run) == ["reads_primary", *steps.split(",")]
    assert result["passed"] is True
    facts = {name: step["facts"] for name, step in steps_run.items()}
    spread = facts["reads_spread"]
    assert float(spread["primary tx/s"]) > 0 and float(spread["standby1 tx/s"]) > 0
    assert float(spread["standby1 server CPU, % of a core"]) > 0
    assert "standby1 tx/s" not in facts["reads_primary"]
    assert float(facts["writes"]["replay_lag_ms, max"]) >= 0
    for run in steps_run["writes"]["runs"]:
        assert run["monitor"]["lag_bytes"]  # a reading every second
    (standby,) = result["target"]["standbys"]
    assert standby["role"] == "standby" and standby["slot"] == "pgopt_standby_1"
    # remote_apply: a commit returns once the standby has replayed it, so no read is stale
    assert facts["read_your_writes_apply"]["stale reads, %"] == "0"
    # readers holding snapshots: the standby cancels them, unless it tells the primary
    cancelled = "standby transactions cancelled, %"
    assert float(facts["standby_conflicts"][cancelled]) > 0
    assert float(facts["standby_feedback"][cancelled]) < float(
        facts["standby_conflicts"][cancelled]
    )
    assert pgopt_processes(str(workdir)) == []
    assert list(workdir.iterdir()) == []


def test_a_users_standby_given_by_dsn(
    tmp_path: Path, binaries: PgBinaries, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second cluster, reached only by DSN: pgopt reads from its standby, and leaves
    both servers as it found them."""
    with (
        EmbeddedTarget(binaries, workdir=workdir) as primary,
        EmbeddedStandby(primary, 1) as standby,
    ):
        dsn = make_conninfo(**primary.conninfo("postgres"))
        standby_dsn = make_conninfo(**standby.conninfo("postgres"))
        args = ["lab", "run", "replicas", "--quick", "--reps", "1", "--duration", "2"]
        args += ["--steps", "reads_spread", "--out", str(tmp_path / "run")]
        assert main([*args, "--dsn", dsn, "--standby-dsn", standby_dsn]) == 0
        result = load_document(tmp_path / "run")
        spread = next(s for s in result["steps"] if s["name"] == "reads_spread")
        assert float(spread["facts"]["standby1 tx/s"]) > 0
        assert result["target"]["standbys"][0]["kind"] == "dsn"
        with primary.connect("postgres") as conn:
            lab_db = "select count(*) from pg_database where datname = 'pgopt_lab'"
            assert conn.execute(lab_db).fetchone() == (0,)

        # the same primary without its standby: one line says what the lab needs
        assert main([*args, "--dsn", dsn, "--out", str(tmp_path / "alone")]) == 2
        assert "give each with --standby-dsn" in capsys.readouterr().err


def _start_with_standby(workdir: Path, out: Path, step: str) -> subprocess.Popen[str]:
    """`pgopt lab run replicas` on one step, in its own process, once its standby
    runs; Ctrl-C reaches it as from a terminal."""
    argv = [sys.executable, "-m", "pgopt", "lab", "run", "replicas", "--quick", "--reps", "1"]
    argv += ["--steps", step, "--duration", "30", "--workdir", str(workdir), "--out", str(out)]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 90
    while len([p for p in pgopt_processes(str(workdir)) if POSTMASTER in p]) < 2:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("the standby never started: " + (proc.stderr.read() if proc.stderr else ""))
        time.sleep(0.2)
    return proc


def test_ctrl_c_stops_the_primary_and_its_standby(workdir: Path, tmp_path: Path) -> None:
    proc = _start_with_standby(workdir, tmp_path / "run", "reads_spread")
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert pgopt_processes(str(workdir)) == []
    assert list(workdir.iterdir()) == []


def _bench_sessions(root: Path) -> int:
    """pgbench's sessions on the server in `root` (its postmaster.pid gives where it
    listens); 0 while it does not answer."""
    try:
        lines = (root / "data" / "postmaster.pid").read_text().splitlines()
        conninfo = make_conninfo(host=lines[4], port=lines[3], user="postgres", dbname="postgres")
        with psycopg.connect(conninfo, connect_timeout=2) as conn:
            row = conn.execute(
                "select count(*) from pg_stat_activity where application_name = %s",
                (BENCH_APPLICATION,),
            ).fetchone()
        return int(row[0]) if row else 0
    except (OSError, IndexError, ValueError, psycopg.Error):
        return 0


def test_a_standby_that_dies_ends_the_run_and_takes_nothing_with_it(
    workdir: Path, tmp_path: Path
) -> None:
    """The standby's postmaster killed during a run on it: the run ends with pgbench's
    error naming the node, and the primary goes too, folders and all."""
    proc = _start_with_standby(workdir, tmp_path / "run", "reads_standby")
    # the standby's folder: pg_basebackup -R wrote its standby.signal (a folder's
    # ctime is no guide: files made in the primary's later make it look newer); two
    # postmasters may run before it does (a busy machine: the primary and a restart)
    deadline = time.monotonic() + 90
    standby = None
    while standby is None:
        signals = (p for p in workdir.glob("pgopt-*") if (p / "data/standby.signal").exists())
        standby = next(signals, None)
        if standby is None and (time.monotonic() > deadline or proc.poll() is not None):
            proc.kill()
            pytest.fail("no standby folder: " + (proc.stderr.read() if proc.stderr else ""))
        time.sleep(0.2)
    deadline = time.monotonic() + 90  # into the runs: pgbench's sessions on the standby
    while not _bench_sessions(standby):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("pgbench never reached the standby")
        time.sleep(0.2)
    os.kill(int((standby / "data" / "postmaster.pid").read_text().split()[0]), signal.SIGKILL)
    _, stderr = proc.communicate(timeout=90)
    assert proc.returncode != 0
    assert "pgopt: error:" in stderr and "standby1" in stderr
    assert pgopt_processes(str(workdir)) == []
    assert list(workdir.iterdir()) == []
