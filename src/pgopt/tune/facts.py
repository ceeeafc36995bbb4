"""What tuning knows about the disk and the server, as records (pure): storage.py
measures the one, server.py reads the other (and `platform_of` reads its build); a
profile's settings as the server accepts them (Profiled)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..servers.settings import SettingRights


@dataclass(frozen=True)
class Storage:
    folder: str
    filesystem: str
    free_mb: int
    fsync_us: float | None  # one 8 kB write and fdatasync; None when not measured
    read_us: float  # a random 8 kB read at queue depth 1
    read_gain: float  # random reads served at depth 8 over depth 1
    seq_page_us: float  # per 8 kB page of 128 kB sequential reads
    direct: bool  # O_DIRECT: the disk itself, not the page cache

    def storage_class(self) -> str:
        """pgtune's question answered from the measurement (hdd, ssd, nvme)."""
        if self.read_us >= 2000:
            return "hdd"
        return "nvme" if self.read_us < 100 and self.read_gain >= 4 else "ssd"


@dataclass(frozen=True)
class ServerSettings:
    version_num: int
    max_connections: int
    data_mb: int
    pg_settings: dict[str, dict[str, Any]]
    platform: str = "linux"  # what the server was built for (platform_of its version())
    rights: SettingRights | None = None  # what the role read with may change; None: anything

    @property
    def major(self) -> int:
        return self.version_num // 10000


def platform_of(version: str) -> str:
    """The platform a server's version() names, as pgtune asks it: linux, mac or windows
    ("PostgreSQL 18.1 on x86_64-pc-linux-gnu, ...", "... on aarch64-apple-darwin23 ...",
    "PostgreSQL 17.2, compiled by Visual C++ build 1942, 64-bit"); other for the rest."""
    text = version.lower()
    if "linux" in text:
        return "linux"
    if "darwin" in text or "apple" in text:
        return "mac"
    if any(word in text for word in ("visual c++", "mingw", "windows", "win32", "win64")):
        return "windows"
    return "other"


@dataclass(frozen=True)
class Profiled:
    """A profile's settings as the server accepts them, and its defaults for those."""

    name: str
    title: str
    settings: dict[str, str]
    defaults: dict[str, str]  # the server's own value of each setting
    at_default: frozenset[str] = frozenset()  # settings the server has at that value already
