"""Facts about the machine, as a container sees it: its memory and CPU limits.

Memory: the smallest of the host's RAM (/proc/meminfo), cgroup v2 `memory.max`
and `memory.high` (throttling starts there, so a server should plan within it),
and cgroup v1 `memory.limit_in_bytes`, along the process's cgroup and its
ancestors; "max" and v1's "unlimited" sentinels (a huge number) are ignored.
CPUs: the smallest of the CPUs this process may run on (affinity), the cgroup's
`cpuset.cpus.effective`, and its quota (v2 `cpu.max` or v1 `cfs_quota_us` over
`cfs_period_us`, any period), rounded up. Each figure says where it came from.
Everything is read under a root folder (`/` on a real machine, a tree of fixture
files in the tests); the parsers are pure.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path("/")


@dataclass(frozen=True)
class Limit:
    value: int
    source: str  # where the value came from: "host", "cgroup v2 memory.max", ...


@dataclass(frozen=True)
class MachineFacts:
    memory: Limit  # bytes
    cpus: Limit
    shm_bytes: int | None  # the size of /dev/shm (parallel workers' shared memory)
    huge_pages: int  # HugePages_Total
    huge_page_bytes: int

    def describe(self) -> dict[str, Any]:
        return {
            "cpus": self.cpus.value,
            "cpus_source": self.cpus.source,
            "memory_bytes": self.memory.value,
            "memory_source": self.memory.source,
            "shm_bytes": self.shm_bytes,
            "huge_pages": self.huge_pages,
            "huge_page_bytes": self.huge_page_bytes,
        }


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo as bytes (or counts, for the HugePages_ lines)."""
    out = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            unit = 1024 if len(fields) > 1 and fields[1] == "kB" else 1
            out[name.strip()] = int(fields[0]) * unit
    return out


def parse_cpu_list(text: str) -> int:
    """The number of CPUs in a list such as "0-3,6,8-9"."""
    count = 0
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        count += int(high) - int(low) + 1 if high else 1
    return count


def parse_quota(quota: str, period: str) -> int | None:
    """CPUs a quota allows, rounded up; None when there is none ("max", -1)."""
    if quota in ("max", "-1") or not quota.lstrip("-").isdigit() or not period.isdigit():
        return None
    return max(1, math.ceil(int(quota) / int(period)))


def cgroup_paths(proc_self_cgroup: str) -> dict[str, str]:
    """Controller -> the process's cgroup path ("" for the v2 unified hierarchy)."""
    paths = {}
    for line in proc_self_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _upwards(base: Path, path: str) -> Iterator[Path]:
    """The cgroup folder of `path` under `base`, then each ancestor up to `base`."""
    parts = [p for p in path.split("/") if p]
    for n in range(len(parts), -1, -1):
        yield base.joinpath(*parts[:n])


def _limits(root: Path) -> Iterator[tuple[str, str, str | None, str | None]]:
    """(kind, source, value, extra) for every limit file along the process's cgroups."""
    fs = root / "sys/fs/cgroup"
    paths = cgroup_paths(_read(root / "proc/self/cgroup") or "0::/")
    unified = fs if (fs / "cgroup.controllers").exists() else fs / "unified"  # v2, or hybrid
    if "" in paths and unified.is_dir():
        for folder in _upwards(unified, paths[""]):
            for name in ("memory.max", "memory.high"):
                yield "memory", f"cgroup v2 {name}", _read(folder / name), None
            cpu = (_read(folder / "cpu.max") or "").split()
            if len(cpu) == 2:
                yield "quota", "cgroup v2 cpu.max", cpu[0], cpu[1]
            yield (
                "cpuset",
                "cgroup v2 cpuset.cpus.effective",
                _read(folder / "cpuset.cpus.effective"),
                None,
            )
    for controller, mount in (("memory", "memory"), ("cpu", "cpu,cpuacct"), ("cpu", "cpu")):
        if controller not in paths or not (fs / mount).is_dir():
            continue
        for folder in _upwards(fs / mount, paths[controller]):
            if controller == "memory":
                value = _read(folder / "memory.limit_in_bytes")
                yield "memory", "cgroup v1 memory.limit_in_bytes", value, None
            else:
                quota = _read(folder / "cpu.cfs_quota_us")
                period = _read(folder / "cpu.cfs_period_us")
                yield "quota", "cgroup v1 cpu.cfs_quota_us", quota, period
    if "cpuset" in paths and (fs / "cpuset").is_dir():
        for folder in _upwards(fs / "cpuset", paths["cpuset"]):
            yield (
                "cpuset",
                "cgroup v1 cpuset.effective_cpus",
                _read(folder / "cpuset.effective_cpus"),
                None,
            )


def read_facts(root: Path = ROOT, affinity: int | None = None) -> MachineFacts:
    """The machine under `root` as this process sees it (`affinity`: the CPUs it may
    run on; this process's own when None)."""
    meminfo = parse_meminfo(_read(root / "proc/meminfo") or "")
    host_memory = meminfo.get("MemTotal") or os.sysconf("SC_PAGE_SIZE") * os.sysconf(
        "SC_PHYS_PAGES"
    )
    memory = Limit(host_memory, "host")
    own = affinity if affinity is not None else len(os.sched_getaffinity(0))
    cpus = Limit(own, "affinity")
    for kind, source, value, extra in _limits(root):
        if not value:
            continue
        if kind == "memory" and value.isdigit() and int(value) < memory.value:
            memory = Limit(int(value), source)  # sentinels exceed the host's RAM
        elif kind == "quota":
            allowed = parse_quota(value, extra or "")
            if allowed is not None and allowed < cpus.value:
                cpus = Limit(allowed, source)
        elif kind == "cpuset":
            count = parse_cpu_list(value)
            if 0 < count < cpus.value:
                cpus = Limit(count, source)
    return MachineFacts(
        memory=memory,
        cpus=cpus,
        shm_bytes=_size_of(root / "dev/shm"),
        huge_pages=meminfo.get("HugePages_Total", 0),
        huge_page_bytes=meminfo.get("Hugepagesize", 0),
    )


def _size_of(path: Path) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_blocks * st.f_frsize


def cpu_count() -> int:
    """CPUs this process may use: affinity, cpuset and quota of its cgroup."""
    return read_facts().cpus.value


def memory_bytes() -> int:
    """Physical memory, capped by the cgroup's memory limits."""
    return read_facts().memory.value


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
    facts = read_facts()
    return {
        "cpus": facts.cpus.value,
        "memory_bytes": facts.memory.value,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
