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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..servers.setting_units import in_unit, server_value, suffix
from .profile import Derived

BOOLEANS = {"on", "off", "true", "false", "yes", "no", "1", "0"}


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


def same(a: str, b: str, row: Mapping[str, Any]) -> bool:
    """Whether two values of a setting mean the same ("128MB" and "16384" pages, "on" and
    "true")."""
    if row["vartype"] in ("integer", "real"):
        return in_unit(a, row["unit"]) == in_unit(b, row["unit"])
    if row["vartype"] == "bool":
        on = ("on", "true", "yes", "1")
        return (a.lower() in on) == (b.lower() in on)
    return a.lower() == b.lower()


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
        text = _number(bound, vartype) + suffix(row["unit"])
        side = "minimum" if number < low else "maximum"
        return text, f"{value} is beyond the server's {side}: set to {text}"
    return value, ""


def _number(value: float, vartype: str) -> str:
    return str(int(value)) if vartype == "integer" or value.is_integer() else str(value)
