"""The `login` lab (seed 000) on a real server: a quick run of a few steps, kept
running afterwards so the data itself can be checked, then stopped and removed.

No performance thresholds: only what must hold on any machine.
"""

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgopt.cli import main
from pgopt.lab import resolve_lab
from pgopt.store import load_document

from .conftest import pgopt_processes

# one login run for the module's tests
pytestmark = pytest.mark.xdist_group("login")

STEPS = ["function", "pipeline", "batch", "logging", "mixed"]
REPS = 1  # the run is read for its plumbing: facts, checks, the kept server
LAB_CHECKS = {
    "every login counted once: sum(login_count) = rows of user_login_rec",
    "every user still has exactly one session row",
}


@dataclass
class LoginRun:
    result: dict[str, Any]
    steps: dict[str, dict[str, Any]]
    server_root: Path
    server_log: str
    conninfo: dict[str, Any]


def _stop(root: Path) -> None:
    """Fast shutdown of a server kept with --keep, as a user would, then remove it."""
    pid_file = root / "data" / "postmaster.pid"
    if pid_file.exists():
        os.kill(int(pid_file.read_text().split()[0]), signal.SIGINT)
        deadline = time.monotonic() + 60
        while pgopt_processes(str(root)) and time.monotonic() < deadline:
            time.sleep(0.1)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def login_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoginRun]:
    workdir = Path(tempfile.mkdtemp(prefix="pgopt-test-", dir="/var/tmp"))
    workdir.chmod(0o755)
    out = tmp_path_factory.mktemp("login") / "out"
    argv = ["lab", "run", "login", "--quick", "--reps", str(REPS), "--duration", "1"]
    argv += ["--steps", ",".join(STEPS)]
    argv += ["--workdir", str(workdir), "--out", str(out), "--keep"]
    try:
        code = main(argv)
        roots = list(workdir.glob("pgopt-*"))
        assert code == 0
        assert len(roots) == 1, roots
        root = roots[0]
        port = int((root / "data" / "postmaster.pid").read_text().splitlines()[3])
        result = load_document(out)
        yield LoginRun(
            result=result,
            steps={s["name"]: s for s in result["steps"]},
            server_root=root,
            server_log=(root / "server.log").read_text(errors="replace"),
            conninfo={
                "host": str(root / "sock"),
                "port": port,
                "user": "postgres",
                "dbname": "pgopt_lab",
            },
        )
    finally:
        for root in workdir.glob("pgopt-*"):
            _stop(root)
        shutil.rmtree(workdir, ignore_errors=True)


def test_lab_definition_follows_the_article() -> None:
    lab = resolve_lab("login")
    names = [s.name for s in lab.steps]
    assert names[:5] == ["baseline", "async_commit", "extended", "prepared", "function"]
    reported = [lab.step(n).reported for n in names[:5]]
    assert [r.value for r in reported if r] == [312, 717, 846, 932, 987]
    function = lab.step("function")
    assert function.mode == "prepared" and function.settings == {"synchronous_commit": "off"}
    assert lab.step("baseline").mode == "simple" and lab.step("baseline").settings == {}
    # each checklist step derives from the step it is compared with
    parents = {s.name: s.parent for s in lab.steps}
    for name in ("pipeline", "batch", "logging", "connect"):
        assert parents[name] == "function"
    assert parents["mixed"] == "prepared" and parents["batch_durable"] == "batch"
    sweep = [s for s in lab.steps if s.name.startswith("concurrency-c")]
    assert [s.clients for s in sweep] == [1, 2, 4, 8, 16, 32, 64]
    assert all(s.parent == "function" and s.settings == function.settings for s in sweep)
    assert lab.step("connect").pgbench_args == ("--connect",)
    assert lab.step("batch").per_transaction == 10
    assert lab.step("mixed").per_transaction == 0.5
    assert lab.metric.unit == "logins/s" and lab.dataset.size_at(20) == 20_000_000


def test_run_passes_with_every_selected_step(login_run: LoginRun) -> None:
    result = login_run.result
    assert result["complete"] is True and result["passed"] is True
    assert list(login_run.steps) == ["baseline", *STEPS]
    assert result["variables"]["users"] == str(round(1_000_000 * result["params"]["scale"]))
    for step in login_run.steps.values():
        names = {c["name"] for c in step["checks"]}
        assert LAB_CHECKS | {"no transaction failed"} <= names, names
        assert all(c["passed"] for c in step["checks"]), step["checks"]
        assert len(step["metric"]["samples"]) == REPS
        assert all(v > 0 for v in step["metric"]["samples"])
        assert step["metric"]["unit"] == "logins/s"


def test_metric_is_tps_times_logins_per_transaction(login_run: LoginRun) -> None:
    per_transaction = {"baseline": 1, "function": 1, "pipeline": 1, "batch": 10, "mixed": 0.5}
    per_transaction["logging"] = 1
    for name, factor in per_transaction.items():
        step = login_run.steps[name]
        tps = [run["tps"] for run in step["runs"]]
        assert step["metric"]["samples"] == pytest.approx([factor * t for t in tps]), name


def test_function_step_moves_three_statements_into_one_call(login_run: LoginRun) -> None:
    function, baseline = login_run.steps["function"], login_run.steps["baseline"]
    assert function["changes"] == {"scripts": ["loginfunc.sql"]}
    assert baseline["changes"] == {"settings": {}, "mode": "simple"}

    def sql_commands(step: dict[str, Any]) -> list[str]:
        commands = [s["command"] for s in step["runs"][0]["statements"]]
        return [c for c in commands if not c.startswith("\\")]

    assert sql_commands(function) == ["SELECT f_user_login(:userid);"]
    assert len(sql_commands(baseline)) == 3
    pipeline = [s["command"] for s in login_run.steps["pipeline"]["runs"][0]["statements"]]
    assert pipeline[1] == "\\startpipeline" and pipeline[-1] == "\\endpipeline"
    assert sql_commands(login_run.steps["pipeline"]) == sql_commands(baseline)


def test_checklist_steps_record_what_they_change(login_run: LoginRun) -> None:
    steps = login_run.steps
    assert steps["batch"]["changes"] == {
        "scripts": ["login_batch.sql"],
        "per_transaction": 10.0,
    }
    assert steps["logging"]["changes"] == {
        "settings": {"log_statement": "all", "log_min_duration_statement": "0"}
    }
    assert steps["mixed"]["changes"]["scripts"] == ["login.sql", "logout.sql"]
    mixed_runs = steps["mixed"]["runs"]
    assert all(run["transactions"] > 0 for run in mixed_runs)


def test_statement_logging_reaches_the_server_log(login_run: LoginRun) -> None:
    logged = [
        line
        for line in login_run.server_log.splitlines()
        if "f_user_login" in line and ("execute" in line or "statement:" in line)
    ]
    assert logged, "log_statement = all wrote nothing to server.log"
    assert 'parameter "log_statement" removed from configuration file' in login_run.server_log


def test_the_data_holds_every_login_and_logout(login_run: LoginRun) -> None:
    logins_measured = sum(
        run["transactions"] * factor
        for name, factor in (("baseline", 1), ("function", 1), ("pipeline", 1), ("batch", 10))
        for run in login_run.steps[name]["runs"]
    )
    logins_measured += sum(run["transactions"] for run in login_run.steps["logging"]["runs"])
    with psycopg.connect(**login_run.conninfo) as conn:
        sessions, counted, users = conn.execute(
            "select count(*), sum(login_count), count(distinct userid) from user_session"
        ).fetchone()  # type: ignore[misc]
        login_rows = conn.execute("select count(*) from user_login_rec").fetchone()[0]  # type: ignore[index]
        logout_rows = conn.execute("select count(*) from user_logout_rec").fetchone()[0]  # type: ignore[index]
        assert conn.execute("select f_user_logout(1)").fetchone()[0] == 0  # type: ignore[index]
        profile = conn.execute("select (f_user_login(2)).o_engname").fetchone()[0]  # type: ignore[index]
    expected_users = int(login_run.result["variables"]["users"])
    assert sessions == users == expected_users
    assert counted == login_rows
    # warm-up runs and the mixed step add logins the timed runs do not count
    assert login_rows >= logins_measured > 0
    assert logout_rows > 0
    assert profile == "digoal.zhou"
