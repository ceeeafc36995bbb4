"""bench/cpu_window.py: which pgbench is the measured run, and the process tree it is
looked for in (read from /proc, with a real child process)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench.cpu_window import command_line, descendants, has_ended, is_measured_run, machine_cpu_s

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@pytest.mark.parametrize(
    ("argv", "measured"),
    [
        (["/usr/bin/pgbench", "-n", "-T", "15", "-c", "2"], True),
        (["pgbench", "--no-vacuum", "--time", "15"], True),
        (["pgbench", "--time=15"], True),
        (["pgbench", "-T", "1"], False),  # the warm-up
        (["pgbench", "-T", "150"], False),
        (["pgbench", "--transactions", "15"], False),
        (["psql", "-T", "15"], False),
        ([], False),
    ],
)
def test_the_measured_run_is_pgbench_timed_for_the_run_length(
    argv: list[str], measured: bool
) -> None:
    assert is_measured_run(argv, 15) is measured


def test_a_grandchild_is_found_and_its_end_seen() -> None:
    sleeper = "import time; time.sleep(30)"
    script = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {sleeper!r}])"
    child = subprocess.Popen([sys.executable, "-c", script])
    try:
        # until the grandchild has exec'd: a fork found earlier still shows its parent's
        # command line
        for _ in range(500):
            below = descendants(child.pid)
            if below and "time.sleep(30)" in " ".join(command_line(below[0])):
                break
            subprocess.run(["sleep", "0.01"], check=True)
        assert len(below) == 1
        grandchild = below[0]
        assert "time.sleep(30)" in " ".join(command_line(grandchild))
        assert grandchild in descendants(os.getpid())
        assert not has_ended(grandchild)
    finally:
        child.kill()
        child.wait()
    subprocess.run(["kill", str(grandchild)], check=True)
    for _ in range(200):
        if has_ended(grandchild):
            break
        subprocess.run(["sleep", "0.01"], check=True)
    assert has_ended(grandchild)


def test_the_machine_cpu_only_grows() -> None:
    before = machine_cpu_s()
    deadline = time.monotonic() + 5
    while True:  # the counters move a tick (10 ms) at a time: work until they do
        sum(i * i for i in range(200_000))
        after = machine_cpu_s()
        if after[:2] != before[:2] or time.monotonic() > deadline:
            break
    # busy and stolen time only grow; idle does not always: it holds iowait, which
    # proc(5) says "may decrease in certain conditions" (this test once saw it)
    assert after[0] >= before[0] and after[2] >= before[2]
    assert after[0] > before[0] or after[1] > before[1]
