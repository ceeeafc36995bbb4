"""`pgopt ab --synthesize --source-capture S`: pgopt has the source log a share of its
transactions for S seconds and replays from that log. Against sysbench in its own
mode (prepared statements, three quarters of the calls on 1% of the keys, around
the middle of each table), whose values no watch can see: the replay's point reads
draw from the keys sysbench asked for, its transactions are sysbench's, and every
setting pgopt changed is back as it was, also after a SIGTERM mid-window. A source
that cannot give its log (no superuser, no logging collector) is one clear error.

Needs Debian's sysbench (`make packages` installs it as root); skips otherwise.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.replay.from_source import synthesize_from
from pgopt.servers.embedded import EmbeddedTarget

from .conftest import FULL_SPEED, new_database
from .test_replay_sysbench import NEEDS_SYSBENCH, ROWS, sysbench, weight_near

RATE = "log_transaction_sample_rate"

pytestmark = [NEEDS_SYSBENCH, pytest.mark.xdist_group("source_capture")]  # one source server


@pytest.fixture(scope="module")
def logging_source(binaries: PgBinaries) -> Iterator[EmbeddedTarget]:
    """A source server that keeps its log as files (csvlog beside stderr), as a
    production server with its logging collector on does."""
    settings = {"logging_collector": "on", "log_destination": "stderr,csvlog"}
    with EmbeddedTarget(binaries, base_settings=settings) as target:
        yield target


@pytest.fixture(scope="module")
def sysbench_db(logging_source: EmbeddedTarget) -> str:
    dsn = new_database(logging_source, "sbcap")
    prepare = sysbench(logging_source.port, dsn.rsplit("/", 1)[1], "oltp_read_write", "prepare")
    subprocess.run(prepare, check=True, capture_output=True, timeout=120)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("analyze")
    return dsn


def _settings(dsn: str) -> dict[str, Any]:
    """What the source's log settings are now, and what postgresql.auto.conf holds."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        now = conn.execute(f"select current_setting('{RATE}')").fetchone()
        auto = conn.execute(
            "select name, setting from pg_file_settings "
            "where sourcefile like '%postgresql.auto.conf'"
        ).fetchall()
    assert now is not None
    return {"now": now[0], "auto": dict(auto)}


def _running(
    source: EmbeddedTarget, dsn: str, seconds: int, *options: str
) -> subprocess.Popen[bytes]:
    database = dsn.rsplit("/", 1)[1]
    args = sysbench(source.port, database, "--threads=2", f"--time={seconds}")
    return subprocess.Popen(
        [*args, "oltp_read_write", "run"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def test_a_capture_of_prepared_sysbench_replays_its_hot_keys_and_puts_the_settings_back(
    logging_source: EmbeddedTarget, sysbench_db: str
) -> None:
    with psycopg.connect(sysbench_db, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
        # a setting of the user's own in postgresql.auto.conf is put back, not reset
        conn.execute(f"alter system set {RATE} = 0.0001")
        conn.execute("select pg_reload_conf()")
    client = _running(logging_source, sysbench_db, 6)
    try:
        time.sleep(1)
        synthesis = synthesize_from(sysbench_db, 0.95, capture_s=3)
    finally:
        client.wait(timeout=60)
        after = _settings(sysbench_db)
        with psycopg.connect(sysbench_db, autocommit=True) as conn:
            conn.execute(f"alter system reset {RATE}")
            conn.execute("select pg_reload_conf()")
    assert after["auto"] == {RATE: "0.0001"}, after
    assert synthesis.workload.values_from.startswith("pgopt's capture of the source's log (3 s, ")
    assert synthesis.workload.protocol == "prepared"
    assert synthesis.workload.clients == 2
    # the application's share, from the captured transactions' times, and this
    # machine's CPUs over the window (the source runs here)
    work = synthesis.workload
    assert work.database_share is not None and 0 < work.database_share <= 1
    assert work.host_busy is not None and work.database_cpu_share is not None
    # sysbench's one kind of transaction, BEGIN to COMMIT (a sampled one is logged whole)
    (script,) = [s for s in synthesis.scripts if s.name.startswith("tx")]
    assert script.text.count("BEGIN;") == script.text.count("COMMIT;") == 1, script.text
    points = [b for b in synthesis.blocks if "WHERE id=$1" in b.statement.query]
    assert points, [b.statement.query for b in synthesis.blocks]
    window = (ROWS // 2 - ROWS // 20, ROWS // 2 + ROWS // 20)  # a tenth of the keys
    for block in points:
        (draw,) = [line for line in block.lines if line.startswith("\\set pgopt_p1 ")]
        # uniform over the keys, a tenth of the weight would fall there
        assert weight_near(draw, *window) > 0.5, draw
    # `k=k+1` in the prepared text, `k=k+$2` in pg_stat_statements: the 1 is replayed
    bumps = [b for b in synthesis.blocks if "SET k=k+$2 WHERE id=$1" in b.statement.query]
    assert bumps, [b.statement.query for b in synthesis.blocks]
    for bump in bumps:
        (added,) = [line for line in bump.lines if line.startswith("\\set pgopt_p2 ")]
        assert added == "\\set pgopt_p2 1", bump.lines


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_sigterm_in_the_window_puts_the_settings_back(
    logging_source: EmbeddedTarget, sysbench_db: str, workdir: Path, tmp_path: Path
) -> None:
    client = _running(logging_source, sysbench_db, 8)
    command = ["ab", "--source-dsn", sysbench_db, "--synthesize", "--source-capture", "30"]
    command += FULL_SPEED
    command += ["--b-setting", "synchronous_commit=off", "--workdir", str(workdir)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgopt", *command, "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    lines: list[str] = []
    window = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "capturing the source's log" in line:
                window.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not window.wait(60):
            proc.kill()
            pytest.fail("the window never opened: " + "".join(lines))
        time.sleep(1)
        assert _settings(sysbench_db)["now"] != "0"  # the window is open
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        reader.join(timeout=10)
    finally:
        client.wait(timeout=60)
    err = "".join(lines)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    # the undo a kill -9 would need was said before the window opened
    assert f"ALTER SYSTEM RESET {RATE}; SELECT pg_reload_conf()" in err
    assert _settings(sysbench_db) == {"now": "0", "auto": {}}
    assert list(workdir.iterdir()) == []


@pytest.mark.parametrize("case", ["no superuser", "no logging collector", "with --source-log"])
def test_a_source_that_cannot_give_its_log_is_one_clear_error(
    case: str,
    logging_source: EmbeddedTarget,
    server: EmbeddedTarget,
    sysbench_db: str,
    tmp_path: Path,
    workdir: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    dsn, says, extra = sysbench_db, "", []
    if case == "no superuser":
        with psycopg.connect(sysbench_db, autocommit=True) as conn:
            conn.execute("drop role if exists pgopt_reader")
            conn.execute("create role pgopt_reader login")
            conn.execute("grant pg_read_all_stats to pgopt_reader")
        dsn = sysbench_db.replace("postgres@", "pgopt_reader@")
        says = "role pgopt_reader is not a superuser"
    elif case == "no logging collector":  # the suite's server logs to its stderr
        dsn = new_database(server, "nolog")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("create table t (id int primary key)")
            conn.execute("select * from t where id = 1")
        says = "its logging_collector is off"
    else:
        log = tmp_path / "capture.log"
        log.write_text("")
        extra, says = ["--source-log", str(log)], "--source-log and --source-capture"
    out = tmp_path / "out"
    command = ["ab", "--source-dsn", dsn, "--synthesize", "--source-capture", "2", *extra]
    command += ["--b-setting", "synchronous_commit=off", "--workdir", str(workdir)]
    assert main([*command, "--out", str(out)]) == 2
    *before, line = capfd.readouterr().err.strip().splitlines()
    assert line.startswith("pgopt: error: ") and says in line, line
    # what the capture would read, said before anything is read; then the one error
    assert [b[:30] for b in before] in ([], ["pgopt: will read from postgres"]), before
    assert not out.exists()
    assert _settings(sysbench_db) == {"now": "0", "auto": {}}
