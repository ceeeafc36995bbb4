"""A pgbench run against a real server, parsed end to end; an aborted run is an error."""

from pathlib import Path

import pytest

from pgopt.errors import BenchError
from pgopt.pgbench.command import PgbenchSpec, QueryMode, ScriptRef
from pgopt.pgbench.runner import run_pgbench
from pgopt.servers.embedded import EmbeddedTarget


@pytest.mark.serial
def test_run_parsed_end_to_end(server: EmbeddedTarget, tmp_path: Path) -> None:
    script = tmp_path / "bench.sql"
    script.write_text("\\set k random(1, :rows)\nselect :k + 1;\n")
    result = run_pgbench(
        server.binaries.path("pgbench"),
        PgbenchSpec(
            scripts=(ScriptRef(path=script),),
            mode=QueryMode.PREPARED,
            clients=2,
            threads=1,
            duration_s=2,
            variables={"rows": "100"},
            log_prefix=tmp_path / "log",
        ),
        server.client_env(),
        cwd=tmp_path,
    )
    s = result.summary
    assert s.query_mode == "prepared" and s.clients == 2 and s.failed == 0
    assert s.transactions > 0 and s.tps > 0
    assert len(result.log.latencies_us) == s.transactions  # every transaction logged
    assert not list(tmp_path.glob("log.*"))  # logs are read, then removed
    assert [st.command for st in s.statements] == ["\\set k random(1, :rows)", "select :k + 1;"]
    # every whole second of the run, and its transactions, from the log
    assert [sec.time_s for sec in result.log.seconds] == [1.0, 2.0]
    # (the seconds start before pgbench has connected: on a busy machine the last one
    # may end after the run, and its transactions with it)
    assert sum(sec.logged for sec in result.log.seconds) == pytest.approx(s.transactions, rel=0.35)
    assert "--progress" not in result.args
    assert result.client_cpu_s >= 0 and result.wall_s >= 2


def test_aborted_run_is_an_error_with_pgbench_reason(
    server: EmbeddedTarget, tmp_path: Path
) -> None:
    script = tmp_path / "bad.sql"
    script.write_text("select 1/0;\n")
    with pytest.raises(BenchError, match="division by zero"):
        run_pgbench(
            server.binaries.path("pgbench"),
            PgbenchSpec(
                scripts=(ScriptRef(path=script),), clients=1, duration_s=None, transactions=3
            ),
            server.client_env(),
            cwd=tmp_path,
        )


def test_a_stop_whose_exception_was_lost_still_stops_pgbench(
    server: EmbeddedTarget, tmp_path: Path
) -> None:
    """Ctrl-C while Python runs a finalizer: the exception is dropped ("Exception ignored
    in"), the request stays (stopping.py): pgbench is stopped and the run raises."""
    import threading
    import time

    from pgopt import stopping
    from pgopt.errors import Interrupted

    script = tmp_path / "bench.sql"
    script.write_text("select pg_sleep(0.01);\n")
    spec = PgbenchSpec(scripts=(ScriptRef(path=script),), clients=1, duration_s=30)
    timer = threading.Timer(1.0, stopping.REQUESTED.set)  # as the signal handler does
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(Interrupted):
            run_pgbench(server.binaries.path("pgbench"), spec, server.client_env(), cwd=tmp_path)
    finally:
        timer.cancel()
        stopping.REQUESTED.clear()
    assert time.monotonic() - started < 15  # not the run's 30 s
