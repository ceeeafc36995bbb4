"""Machine facts as a container sees them, read from trees of fixture files laid out
as /proc and /sys/fs/cgroup are: cgroup v2 and v1, quotas with any period, cpusets,
the "unlimited" sentinels, memory.high below memory.max, limits set on an ancestor."""

from pathlib import Path

import pytest

from pgopt.machine import (
    parse_cpu_list,
    parse_meminfo,
    parse_quota,
    read_facts,
)

GIB = 1024**3
MEMINFO = "MemTotal:       16384000 kB\nHugePages_Total:      64\nHugepagesize:       2048 kB\n"
V1_UNLIMITED = "9223372036854771712"


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in {"proc/meminfo": MEMINFO, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return root


def test_a_host_without_limits_is_the_host(tmp_path: Path) -> None:
    facts = read_facts(tree(tmp_path, {"proc/self/cgroup": "0::/"}), affinity=8)
    assert (facts.memory.value, facts.memory.source) == (16384000 * 1024, "host")
    assert (facts.cpus.value, facts.cpus.source) == (8, "affinity")
    assert (facts.huge_pages, facts.huge_page_bytes) == (64, 2 * 1024 * 1024)


def test_cgroup_v2_memory_high_below_max_and_a_quota_with_a_50000_period(
    tmp_path: Path,
) -> None:
    root = tree(
        tmp_path,
        {
            "proc/self/cgroup": "0::/",
            "sys/fs/cgroup/cgroup.controllers": "cpuset cpu memory",
            "sys/fs/cgroup/memory.max": str(4 * GIB),
            "sys/fs/cgroup/memory.high": str(3 * GIB),
            "sys/fs/cgroup/cpu.max": "150000 50000",
        },
    )
    facts = read_facts(root, affinity=16)
    assert (facts.memory.value, facts.memory.source) == (3 * GIB, "cgroup v2 memory.high")
    assert (facts.cpus.value, facts.cpus.source) == (3, "cgroup v2 cpu.max")


def test_cgroup_v2_max_means_no_limit_and_a_cpuset_counts(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "proc/self/cgroup": "0::/",
            "sys/fs/cgroup/cgroup.controllers": "cpuset cpu memory",
            "sys/fs/cgroup/memory.max": "max",
            "sys/fs/cgroup/memory.high": "max",
            "sys/fs/cgroup/cpu.max": "max 100000",
            "sys/fs/cgroup/cpuset.cpus.effective": "0-1,4",
        },
    )
    facts = read_facts(root, affinity=16)
    assert facts.memory.source == "host"
    assert (facts.cpus.value, facts.cpus.source) == (3, "cgroup v2 cpuset.cpus.effective")


def test_a_limit_on_an_ancestor_of_the_process_cgroup_applies(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "proc/self/cgroup": "0::/machine.slice/app.scope",
            "sys/fs/cgroup/cgroup.controllers": "memory",
            "sys/fs/cgroup/machine.slice/memory.max": str(2 * GIB),
            "sys/fs/cgroup/machine.slice/app.scope/memory.max": "max",
        },
    )
    assert read_facts(root, affinity=4).memory.value == 2 * GIB


def test_cgroup_v1_limits_and_their_unlimited_sentinels(tmp_path: Path) -> None:
    cgroup = (
        "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n2:cpuset:/docker/abc\n1:name=systemd:/"
    )
    limited = tree(
        tmp_path / "limited",
        {
            "proc/self/cgroup": cgroup,
            "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": str(GIB),
            "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000",
            "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000",
        },
    )
    facts = read_facts(limited, affinity=8)
    assert (facts.memory.value, facts.memory.source) == (GIB, "cgroup v1 memory.limit_in_bytes")
    assert (facts.cpus.value, facts.cpus.source) == (1, "cgroup v1 cpu.cfs_quota_us")
    unlimited = tree(
        tmp_path / "unlimited",
        {
            "proc/self/cgroup": cgroup,
            "sys/fs/cgroup/memory/memory.limit_in_bytes": V1_UNLIMITED,
            "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1",
            "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000",
            "sys/fs/cgroup/cpuset/cpuset.effective_cpus": "0-7",
        },
    )
    facts = read_facts(unlimited, affinity=8)
    assert (facts.memory.source, facts.cpus.value, facts.cpus.source) == ("host", 8, "affinity")


@pytest.mark.parametrize(("text", "count"), [("0", 1), ("0-3", 4), ("0-1,4,6-7", 5), ("0-3,\n", 4)])
def test_cpu_lists(text: str, count: int) -> None:
    assert parse_cpu_list(text) == count


@pytest.mark.parametrize(
    ("quota", "period", "cpus"),
    [
        ("max", "100000", None),
        ("-1", "100000", None),
        ("250000", "100000", 3),
        ("1000", "100000", 1),
    ],
)
def test_quotas_round_up(quota: str, period: str, cpus: int | None) -> None:
    assert parse_quota(quota, period) == cpus


def test_meminfo_is_in_bytes() -> None:
    assert parse_meminfo(MEMINFO)["MemTotal"] == 16384000 * 1024
