"""CPU time of local processes, read from /proc (Linux).

The server's CPU time per transaction is a low-noise second figure beside
throughput: a neighbour's load slows a transaction down but does not add CPU
to it. A PostgreSQL server is a postmaster and its children; the children that
have exited (pgbench's backends, when pgbench disconnects) are counted in the
postmaster's `cutime`/`cstime` once reaped, and the live ones (or not yet
reaped) in their own `utime`/`stime`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PROC = Path("/proc")


def stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (which may hold spaces)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def process_cpu_s(pid: int, *, with_reaped_children: bool = False) -> float | None:
    """User + system CPU seconds of `pid` (and of its children it has reaped): to the
    nanosecond from /proc/PID/schedstat where the kernel keeps it, else in clock ticks."""
    if not with_reaped_children:
        try:
            return int((PROC / str(pid) / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            pass
    fields = stat_fields(pid)
    if fields is None:
        return None
    # after the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
    ticks = int(fields[11]) + int(fields[12])
    if with_reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICKS


def children(pid: int) -> list[int]:
    """Direct children of `pid`."""
    out = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(int(entry.name))
        if fields is not None and fields[1] == str(pid):
            out.append(int(entry.name))
    return out


def tree_cpu_s(pid: int) -> float | None:
    """CPU seconds of a server: the postmaster, its reaped children and its live ones;
    None when /proc cannot tell (another machine, no permission)."""
    return consistent_tree_total(
        lambda: process_cpu_s(pid, with_reaped_children=True),
        lambda: [process_cpu_s(child) or 0.0 for child in children(pid)],
    )


def consistent_tree_total(
    parent_with_reaped: Callable[[], float | None],
    live_children: Callable[[], list[float]],
    attempts: int = 5,
) -> float | None:
    """The parent's time with its reaped children's, plus its live children's, read
    so that no child falls between the two: a child reaped while the live ones are
    listed is in neither (the backends of a run that just ended are reaped in that
    instant), so the parent is read before and after the listing and the reading is
    kept only when the parent's figure did not move meanwhile."""
    before = parent_with_reaped()
    for _ in range(attempts):
        if before is None:
            return None
        live = sum(live_children())
        after = parent_with_reaped()
        if after == before:
            return before + live
        before = after
    return None if before is None else before + sum(live_children())
