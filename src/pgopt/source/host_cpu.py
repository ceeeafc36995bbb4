"""The CPU of the machine the source runs on, during the watch, where that machine is
this one: how busy it was, and what share of that the source's server took (the rest
is its other programs': an application on the same machine, its web workers).

A faster database gives an application that shares its CPUs more than Amdahl's
bound on time says: the CPU the database no longer spends goes to the application,
whose own time shrinks too (analysis/amdahl.py). That needs both figures, which only
/proc of the source's own machine holds.

The source is taken to be on this machine only when the backend of pgopt's own
session is a process here, a child of a postgres postmaster, whose command line
names the port pgopt's session connects from (a local socket: `[local]`): an address
that only looks local (a container's port, a tunnel) is not. The server's CPU is
its postmaster's tree (servers/cpu.py: the live backends and those reaped); the
machine's is /proc/stat's busy time; pgopt's own process is taken out of it.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from pathlib import Path
from typing import Any

import psycopg

from ..servers.cpu import TICKS, stat_fields, tree_cpu_s
from .shape import HostCpu

PROC = Path("/proc")


class HostCpuWatch:
    """The machine's and the source server's CPU from `start` to `finish`."""

    def __init__(self, postmaster: int) -> None:
        self.postmaster = postmaster
        self.started = time.monotonic()
        self.busy = _busy_s()
        self.server = tree_cpu_s(postmaster)
        self.own = _own_cpu_s()

    @classmethod
    def start(cls, conn: psycopg.Connection[Any]) -> HostCpuWatch | None:
        """A watch of the source's machine when it is this one, else None."""
        postmaster = source_postmaster(conn)
        return cls(postmaster) if postmaster is not None else None

    def finish(self) -> HostCpu | None:
        """The figures since `start`; None where /proc stopped telling."""
        busy, server = _busy_s(), tree_cpu_s(self.postmaster)
        if busy is None or server is None or self.busy is None or self.server is None:
            return None
        return HostCpu(
            seconds=time.monotonic() - self.started,
            cores=os.cpu_count() or 1,
            busy_s=max(0.0, busy - self.busy - (_own_cpu_s() - self.own)),
            database_s=max(0.0, server - self.server),
        )


def source_postmaster(conn: psycopg.Connection[Any]) -> int | None:
    """The pid of the source's postmaster when its server runs on this machine (the
    session's backend is a process here, connected to this session's port), else
    None."""
    backend = conn.info.backend_pid
    try:
        command = (PROC / str(backend) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (OSError, UnicodeDecodeError):
        return None
    fields = stat_fields(backend)
    if fields is None or not command.startswith("postgres:"):
        return None
    if not _connected_from_here(conn, command):
        return None
    parent = int(fields[1])  # after the name: state(0) ppid(1)
    try:
        name = (PROC / str(parent) / "comm").read_text().strip()
    except OSError:
        return None
    return parent if name in ("postgres", "postmaster") else None


def _connected_from_here(conn: psycopg.Connection[Any], command: str) -> bool:
    """The backend's command line names this session's own client port, or a local
    socket where the session is on one."""
    try:
        sock = socket.socket(fileno=os.dup(conn.pgconn.socket))
    except OSError:
        return False
    with sock:
        if sock.family == socket.AF_UNIX:
            return "[local]" in command
        port = sock.getsockname()[1]
    return f"({port})" in command


def _busy_s() -> float | None:
    """The machine's busy CPU seconds since boot (all but idle and iowait)."""
    try:
        line = (PROC / "stat").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    ticks = [int(v) for v in line.split()[1:9]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / TICKS


def _own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
