"""Facts about the machine a lab ran on, cgroup-aware (containers report their limits)."""

from __future__ import annotations

import math
import os
import platform
from pathlib import Path
from typing import Any

_CGROUP = Path("/sys/fs/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def cpu_count() -> int:
    """CPUs this process may use: affinity, capped by a cgroup v2/v1 CPU quota."""
    cpus = len(os.sched_getaffinity(0))
    quota = _read(_CGROUP / "cpu.max")
    if quota:
        limit, _, period = quota.partition(" ")
        if limit != "max" and period:
            cpus = min(cpus, max(1, math.ceil(int(limit) / int(period))))
    else:
        q, p = _read(_CGROUP / "cpu/cpu.cfs_quota_us"), _read(_CGROUP / "cpu/cpu.cfs_period_us")
        if q and p and int(q) > 0:
            cpus = min(cpus, max(1, math.ceil(int(q) / int(p))))
    return cpus


def memory_bytes() -> int:
    """Physical memory, capped by a cgroup memory limit when one is set."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in (_CGROUP / "memory.max", _CGROUP / "memory/memory.limit_in_bytes"):
        limit = _read(limit_file)
        if limit and limit.isdigit():
            total = min(total, int(limit))
            break
    return total


def filesystem_type(path: Path) -> str:
    """The type of the filesystem holding `path` (e.g. ext4, tmpfs), from /proc/mounts."""
    best, fstype = "", "unknown"
    target = str(path.resolve())
    mounts = _read(Path("/proc/mounts")) or ""
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        mount_point = fields[1]
        inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) > len(best):
            best, fstype = mount_point, fields[2]
    return fstype


def describe() -> dict[str, Any]:
    return {
        "cpus": cpu_count(),
        "memory_bytes": memory_bytes(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
