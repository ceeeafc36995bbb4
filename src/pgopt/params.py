"""Run parameters: the lab's defaults, `--quick`, and the user's overrides, resolved once."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

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
    )


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
