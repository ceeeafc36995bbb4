"""A setting's value as PostgreSQL reads and writes it (pure): a number in the
setting's unit ("16384" of 8kB) or with a unit of its kind (B/kB/MB/GB/TB,
us/ms/s/min/h/d), and the server's own value as a person writes it ("128MB").
tune/ checks a derived configuration with these; source/settings.py writes the
source's settings back with them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MEMORY = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
TIME = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def server_value(row: Mapping[str, Any]) -> str:
    """The server's own value of a setting (pg_settings.setting: its configuration as
    found; on a fresh server, the default), as a person writes it: "128MB", not
    "16384" pages of 8 kB. A value the server computed at start because none was set
    (wal_buffers: -1, 1/32 of shared_buffers) is given as -1, so that putting it back
    lets the server compute it again from the settings around it."""
    if row.get("source") == "default" and str(row["boot_val"]) == "-1":
        return "-1"
    value = str(row.get("setting") or row["boot_val"])
    if row["vartype"] != "integer" or value.startswith("-"):
        return value
    size = unit_bytes(row["unit"])
    if size is not None:
        total = int(value) * size
        for unit in ("GB", "MB", "kB"):
            if total and total % MEMORY[unit] == 0:
                return f"{total // MEMORY[unit]}{unit}"
        return f"{total}B"
    return value + suffix(row["unit"])


def in_unit(value: str, unit: str | None) -> float | None:
    """`value` ("64MB", "15min", "0.9", "200") in the setting's unit ("8kB", "ms", ...)."""
    m = _NUMBER.match(value)
    if not m:
        return None
    number, given = float(m.group(1)), m.group(2)
    if not given:
        return number
    base, factor = _unit(unit or "")
    if given in MEMORY and base in MEMORY:
        return number * MEMORY[given] / (MEMORY[base] * factor)
    if given in TIME and base in TIME:
        return number * TIME[given] / (TIME[base] * factor)
    return None


def unit_bytes(unit: str | None) -> int | None:
    """Bytes in one unit of a memory setting ("8kB" -> 8192); None for other units."""
    base, factor = _unit(unit or "")
    return int(MEMORY[base] * factor) if base in MEMORY else None


def _unit(unit: str) -> tuple[str, float]:
    """A unit as its base and factor: 8kB is (kB, 8), ms is (ms, 1)."""
    m = re.match(r"^(\d*)(\D+)$", unit)
    if not m:
        return "", 1.0
    return m.group(2), float(m.group(1) or 1)


def suffix(unit: str | None) -> str:
    """A unit PostgreSQL accepts after a number ("8kB" is not one: give none)."""
    return unit if unit in MEMORY or unit in TIME else ""
