"""Where the machine's CPU went during one measured pgbench run, whoever started it.

harness_cost.py runs pgbench itself for its plain arms and through `pgopt lab run`
for pgopt's, so neither can time the other's run from outside. A thread here
watches the descendants of the bench's own process (cheaply: the kernel's list of
each thread's children, every POLL_S), picks out the measured pgbench by its
`--time`/`-T` argument (the warm-up runs for another length) and reads, when the
run appears and when it has gone: the machine's busy, idle and stolen CPU
(/proc/stat) and the server's CPU (its process tree, with the backends it has
reaped). On a machine the run keeps busy, throughput is the CPU the workload got
over the CPU a transaction took, so a cost splits into the two: CPU left idle
or taken by others, and more CPU per transaction (the server's or pgbench's).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
POLL_S = 0.01
REAPED_AFTER_S = 0.25  # time for the postmaster to reap the run's backends
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Window:
    """One measured run's CPU, in seconds of all cores together."""

    wall_s: float
    busy_s: float  # user, nice, system, irq, softirq: every process on the machine
    idle_s: float  # idle and iowait
    steal_s: float  # taken by the hypervisor for other guests
    server_s: float | None  # the server's processes


def machine_cpu_s() -> tuple[float, float, float]:
    """Busy, idle and stolen CPU seconds since boot, all cores (/proc/stat)."""
    fields = [int(x) for x in (PROC / "stat").read_text().splitlines()[0].split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq) / TICKS, (idle + iowait) / TICKS, steal / TICKS


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, from each thread's `children` list (Linux 3.5+)."""
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = list((PROC / str(parent) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def is_measured_run(argv: list[str], duration_s: int) -> bool:
    """Whether `argv` is pgbench's for a run of `duration_s` seconds (`-T N`,
    `--time N` or `--time=N`): the measured run, not its warm-up."""
    if not argv or not argv[0].endswith("pgbench"):
        return False
    length = str(duration_s)
    return any(
        (word in ("-T", "--time") and following == length) or word == f"--time={length}"
        for word, following in zip(argv, [*argv[1:], ""], strict=True)
    )


def command_line(pid: int) -> list[str]:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def has_ended(pid: int) -> bool:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2 :].startswith("Z")


class WindowWatcher:
    """Context manager around one arm's run: `window` is its measured pgbench's Window
    afterwards, or None if no such run was seen."""

    def __init__(self, duration_s: int, server_cpu_s: Callable[[], float | None]) -> None:
        self.duration_s = duration_s
        self.server_cpu_s = server_cpu_s
        self.window: Window | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="cpu-window", daemon=True)

    def __enter__(self) -> WindowWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _find(self) -> int | None:
        for pid in descendants(os.getpid()):
            if is_measured_run(command_line(pid), self.duration_s):
                return pid
        return None

    def _watch(self) -> None:
        pid = None
        while pid is None:
            if self._stop.wait(POLL_S):
                return
            pid = self._find()
        started, machine, server = time.monotonic(), machine_cpu_s(), self.server_cpu_s()
        while not has_ended(pid):
            time.sleep(POLL_S)
        wall, machine_end = time.monotonic() - started, machine_cpu_s()
        time.sleep(REAPED_AFTER_S)
        server_end = self.server_cpu_s()
        busy, idle, steal = (b - a for a, b in zip(machine, machine_end, strict=True))
        served = None if server is None or server_end is None else server_end - server
        self.window = Window(wall, busy, idle, steal, served)
