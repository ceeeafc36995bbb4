"""Will a configuration fit in the memory it is given? (pure)

The memory a server may need at once, by the settings (the profile's, else the
server's own): shared_buffers and wal_buffers; every connection running a sort
and a hash at once (work_mem, and work_mem x hash_mem_multiplier); each
autovacuum worker's memory
(autovacuum_work_mem, or maintenance_work_mem when it is -1) and one more
maintenance_work_mem for an index build. Held against 90% of the memory limit
(the guardrail DBtune and postgres-checkup use), the rest being the OS's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..servers.setting_units import in_unit, unit_bytes

SHARE = 0.9


@dataclass(frozen=True)
class MemoryCheck:
    parts: tuple[tuple[str, int], ...]  # what needs memory, in bytes
    limit: int
    connections: int
    hash_factor: float  # hash_mem_multiplier

    @property
    def total(self) -> int:
        return sum(b for _, b in self.parts)

    @property
    def fits(self) -> bool:
        return self.total <= SHARE * self.limit

    def describe(self) -> str:
        share = self.total / self.limit if self.limit else 0.0
        parts = ", ".join(f"{name} {b / 2**20:,.0f} MB" for name, b in self.parts)
        word = "fits within" if self.fits else "exceeds"
        total, limit = self.total / 2**20, self.limit / 2**20
        return (
            f"memory at worst {total:,.0f} MB, {share:.0%} of the {limit:,.0f} MB limit: "
            f"{word} {SHARE:.0%} ({parts})"
        )


def _bytes(name: str, value: str, pg_settings: Mapping[str, Mapping[str, Any]]) -> int:
    unit = pg_settings[name]["unit"]
    number, size = in_unit(value, unit), unit_bytes(unit)
    return int(number * size) if number is not None and size is not None else 0


def memory_check(
    settings: Mapping[str, str],
    pg_settings: Mapping[str, Mapping[str, Any]],
    connections: int,
    limit_bytes: int,
) -> MemoryCheck:
    def value(name: str) -> str:
        row = pg_settings[name]
        return settings.get(name) or str(row.get("setting") or row["boot_val"])

    def size(name: str) -> int:
        return max(0, _bytes(name, value(name), pg_settings))

    work = size("work_mem")
    hash_factor = float(value("hash_mem_multiplier"))
    maintenance = size("maintenance_work_mem")
    autovacuum = size("autovacuum_work_mem") or maintenance  # -1: maintenance_work_mem
    workers = int(value("autovacuum_max_workers"))
    wal = size("wal_buffers") or min(size("shared_buffers") // 32, 16 * 2**20)  # -1: auto
    parts = (
        ("shared_buffers", size("shared_buffers")),
        ("wal_buffers", wal),
        (
            f"{connections} connections x work_mem x {1 + hash_factor:g}",
            int(connections * work * (1 + hash_factor)),
        ),
        (f"{workers} autovacuum workers", workers * autovacuum),
        ("an index build", maintenance),
    )
    return MemoryCheck(parts, limit_bytes, connections, hash_factor)


def fitting_work_mem(check: MemoryCheck) -> int | None:
    """The largest work_mem, in whole MB as bytes (at least 1 MB), with which `check`
    fits; None when it fits already or cannot fit at any work_mem."""
    if check.fits:
        return None
    work_part = next(b for name, b in check.parts if "work_mem" in name)
    room = SHARE * check.limit - (check.total - work_part)
    per_connection = room / (check.connections * (1 + check.hash_factor))
    mb = int(per_connection // 2**20)
    return mb * 2**20 if mb >= 1 else None
