"""A derived configuration checked against the target server's own pg_settings (pure).

Each value is read as PostgreSQL reads it (a number in the setting's unit, or with
a unit of its kind: B/kB/MB/GB/TB, us/ms/s/min/h/d), then held to the server's
bounds: a number outside min_val..max_val is set to the bound, an enum value the
server does not offer (io_uring or lz4 in a build without them) is left out, a
setting the server does not have (another version) is left out; each with the
reason. Nothing out of bounds is ever emitted. Each accepted setting says whether
it needs a restart (context postmaster).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .profile import Derived

MEMORY = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
TIME = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
BOOLEANS = {"on", "off", "true", "false", "yes", "no", "1", "0"}
_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


@dataclass(frozen=True)
class Checked:
    name: str
    value: str
    reason: str
    restart: bool
    default: str  # the server's own value (what "back to the default" sets)
    note: str = ""  # what the check changed, if anything
    is_default: bool = False  # the server has this value already


@dataclass(frozen=True)
class Refused:
    name: str
    value: str
    why: str


def check(
    derived: Iterable[Derived], pg_settings: Mapping[str, Mapping[str, Any]]
) -> tuple[tuple[Checked, ...], tuple[Refused, ...]]:
    """`derived` as this server accepts it; later rules for a name replace earlier ones."""
    accepted: dict[str, Checked] = {}
    refused: list[Refused] = []
    for d in derived:
        row = pg_settings.get(d.name)
        if row is None:
            refused.append(Refused(d.name, d.value, "this server has no such setting"))
            continue
        value, note = _fit(d.value, row)
        if value is None:
            refused.append(Refused(d.name, d.value, note))
            continue
        restart = row["context"] == "postmaster"
        default = server_value(row)
        accepted[d.name] = Checked(
            d.name, value, d.reason, restart, default, note, same(value, default, row)
        )
    return tuple(accepted.values()), tuple(refused)


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
    return value + _suffix(row["unit"])


def same(a: str, b: str, row: Mapping[str, Any]) -> bool:
    """Whether two values of a setting mean the same ("128MB" and "16384" pages, "on" and
    "true")."""
    if row["vartype"] in ("integer", "real"):
        return in_unit(a, row["unit"]) == in_unit(b, row["unit"])
    if row["vartype"] == "bool":
        on = ("on", "true", "yes", "1")
        return (a.lower() in on) == (b.lower() in on)
    return a.lower() == b.lower()


def _suffix(unit: str | None) -> str:
    """A unit PostgreSQL accepts after a number ("8kB" is not one: give none)."""
    return unit if unit in MEMORY or unit in TIME else ""


def _fit(value: str, row: Mapping[str, Any]) -> tuple[str | None, str]:
    vartype = row["vartype"]
    if vartype == "bool":
        if value.lower() in BOOLEANS:
            return value, ""
        return None, f"not a boolean: {value!r}"
    if vartype == "enum":
        offered = [str(v) for v in row["enumvals"] or ()]
        if value.lower() in (v.lower() for v in offered):
            return value, ""
        return None, f"this server offers {', '.join(offered)} (built without {value}?)"
    if vartype == "string":
        return value, ""
    number = in_unit(value, row["unit"])
    if number is None:
        return None, f"cannot read {value!r} as a number of {row['unit'] or 'units'}"
    low, high = float(row["min_val"]), float(row["max_val"])
    if vartype == "integer" and not float(number).is_integer():
        number = round(number)
    if number < low or number > high:
        bound = low if number < low else high
        text = _number(bound, vartype) + _suffix(row["unit"])
        side = "minimum" if number < low else "maximum"
        return text, f"{value} is beyond the server's {side}: set to {text}"
    return value, ""


def in_unit(value: str, unit: str | None) -> float | None:
    """`value` ("64MB", "15min", "0.9", "200") in the setting's unit ("8kB", "ms", ...)."""
    m = _NUMBER.match(value)
    if not m:
        return None
    number, suffix = float(m.group(1)), m.group(2)
    if not suffix:
        return number
    base, factor = _unit(unit or "")
    if suffix in MEMORY and base in MEMORY:
        return number * MEMORY[suffix] / (MEMORY[base] * factor)
    if suffix in TIME and base in TIME:
        return number * TIME[suffix] / (TIME[base] * factor)
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


def _number(value: float, vartype: str) -> str:
    return str(int(value)) if vartype == "integer" or value.is_integer() else str(value)
