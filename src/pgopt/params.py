"""Run parameters: the lab's defaults, `--quick`, and the user's overrides, resolved once."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from . import machine
from .errors import UsageError
from .lab.spec import Lab, Step


@dataclass(frozen=True)
class RunParams:
    quick: bool
    scale: float
    duration_s: int
    reps: int
    warmup_s: int
    clients: int | None
    seed: int
    steps: tuple[str, ...]
    sample_waits: bool = True
    ram_bytes: int = 0
    redis_url: str | None = None
    restart: bool = False  # the lab restarts the server before every timed run

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["steps"] = list(self.steps)
        return data


def resolve_params(
    lab: Lab,
    *,
    quick: bool = False,
    scale: float | None = None,
    duration: int | None = None,
    reps: int | None = None,
    clients: int | None = None,
    seed: int = 1,
    steps: list[str] | None = None,
    warmup: int | None = None,
    sample_waits: bool = True,
    ram: str | None = None,
    redis_url: str | None = None,
) -> RunParams:
    base = lab.quick if quick else lab.defaults
    for name, value in (
        ("--scale", scale),
        ("--duration", duration),
        ("--reps", reps),
        ("--clients", clients),
    ):
        if value is not None and value <= 0:
            raise UsageError(f"{name} must be positive, got {value}")
    return RunParams(
        quick=quick,
        scale=scale if scale is not None else base.scale,
        duration_s=duration if duration is not None else base.duration_s,
        reps=reps if reps is not None else base.reps,
        warmup_s=warmup if warmup is not None else base.warmup_s,
        clients=clients,
        seed=seed,
        steps=tuple(s.name for s in select_steps(lab, steps)),
        sample_waits=sample_waits,
        ram_bytes=parse_size(ram) if ram else machine.memory_bytes(),
        redis_url=redis_url,
        restart=base.restart,
    )


_UNITS = {
    "": 1,
    "B": 1,
    "K": 2**10,
    "KB": 2**10,
    "M": 2**20,
    "MB": 2**20,
    "G": 2**30,
    "GB": 2**30,
    "T": 2**40,
    "TB": 2**40,
}


def parse_size(text: str) -> int:
    """'8GB', '512MB', '1.5GB' -> bytes (binary units, as PostgreSQL counts them)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?B?)\s*", text.upper())
    if not m or m.group(2) not in _UNITS:
        raise UsageError(f"--ram {text!r}: give a size such as 8GB or 512MB")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def select_steps(lab: Lab, names: list[str] | None) -> list[Step]:
    """The steps to run, in lab order; the baseline is always included."""
    if not names:
        return list(lab.steps)
    known = {s.name for s in lab.steps}
    wanted = set()
    for name in names:
        matches = {s.name for s in lab.steps if s.name == name or s.name.startswith(name + "-c")}
        if not matches:
            raise UsageError(
                f"lab {lab.name} has no step {name!r} (steps: {', '.join(sorted(known))})"
            )
        wanted |= matches
    wanted.add(lab.baseline.name)
    return [s for s in lab.steps if s.name in wanted]
