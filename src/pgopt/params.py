"""Run parameters: the lab's defaults, `--quick`, and the user's overrides, resolved once."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from . import machine
from .errors import UsageError
from .lab.spec import Lab, Step

# `--latencies`: pgbench times every transaction and statement in the first round's
# runs, in every run, or in none (engine/workloads.py says why not in every run)
LATENCY_RUNS = ("first", "all", "none")
# `--reps auto`: the rounds after which a run looks whether every comparison is decided
# (analysis/verdicts.py holds the alpha that keeps the overall error rate at 5%)
LOOKS = (4, 6, 8, 10)
# `--slice`: each side of a round runs in slices of this many seconds, interleaved
# with the other sides' (engine/slices.py); 0 runs each side whole
SLICE_S = 1


def is_detailed(latencies: str, round_number: int) -> bool:
    """Whether a round's runs keep pgbench's transaction log and per-statement report:
    `--latencies` first (the first round's runs), all, or none."""
    return latencies == "all" or (latencies == "first" and round_number == 1)


@dataclass(frozen=True)
class RunParams:
    quick: bool
    scale: float
    duration_s: int
    reps: int | None  # None: sequential looks (`--reps auto`)
    warmup_s: int
    clients: int | None
    seed: int
    steps: tuple[str, ...]
    sample_waits: bool = True
    ram_bytes: int = 0
    cpus: int = 1  # the machine's, as settings formulas see them
    redis_url: str | None = None
    restart: bool = False  # the lab restarts the server before every timed run
    margin: float = 0.03  # the smallest relative change that matters
    latencies: str = "first"  # the runs pgbench times per transaction: LATENCY_RUNS
    standby_dsns: tuple[str, ...] = ()  # a user's hot standbys (--standby-dsn)
    scaled: bool = True  # the dataset's size follows `scale` (an A/B's copy does not)
    slice_s: int = SLICE_S  # seconds of a slice of a run (0: whole runs)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["standby_dsns"]  # a DSN may hold a password: the target's facts name them
        data["steps"] = list(self.steps)
        # result.json has always carried reps as a count: the most rounds a step runs
        data["reps"] = self.reps if self.reps is not None else LOOKS[-1]
        data["reps_mode"] = "auto" if self.reps is None else "fixed"
        return data


def resolve_params(
    lab: Lab,
    *,
    quick: bool = False,
    scale: float | None = None,
    duration: int | None = None,
    reps: str | int | None = None,
    clients: int | None = None,
    seed: int = 1,
    steps: list[str] | None = None,
    warmup: int | None = None,
    sample_waits: bool = True,
    ram: str | None = None,
    redis_url: str | None = None,
    margin: float | None = None,
    latencies: str = "first",
    standby_dsns: tuple[str, ...] = (),
    slice_s: int | None = None,
) -> RunParams:
    base = lab.quick if quick else lab.defaults
    check_overrides(
        scale=scale, duration=duration, clients=clients, margin=margin, reps=reps, slice_s=slice_s
    )
    if latencies not in LATENCY_RUNS:
        raise UsageError(f"--latencies takes {', '.join(LATENCY_RUNS)}, got {latencies!r}")
    return RunParams(
        quick=quick,
        scale=scale if scale is not None else base.scale,
        duration_s=duration if duration is not None else base.duration_s,
        reps=_reps(reps, base.reps),
        warmup_s=warmup if warmup is not None else _warmup(base.warmup_s, duration),
        clients=clients,
        seed=seed,
        steps=tuple(s.name for s in select_steps(lab, steps or quick_steps(lab, quick))),
        sample_waits=sample_waits,
        ram_bytes=parse_size(ram) if ram else machine.memory_bytes(),
        cpus=machine.cpu_count(),
        redis_url=redis_url,
        restart=base.restart,
        margin=margin / 100 if margin is not None else lab.metric.margin,
        latencies=latencies,
        standby_dsns=standby_dsns,
        scaled=lab.dataset.variable is not None,
        slice_s=SLICE_S if slice_s is None else slice_s,
    )


def _warmup(lab_warmup_s: int, duration: int | None) -> int:
    """The lab's warm-up, never longer than a --duration chosen shorter: a 2-s run is
    not preceded by 5 s of the same work."""
    return lab_warmup_s if duration is None else min(lab_warmup_s, duration)


def check_overrides(
    *,
    scale: float | None = None,
    duration: int | None = None,
    clients: int | None = None,
    margin: float | None = None,
    reps: str | int | None = None,
    slice_s: int | None = None,
) -> None:
    """Refuse a number no run can use, before anything starts (UsageError: exit 2)."""
    if slice_s is not None and slice_s < 0:
        raise UsageError(f"--slice takes seconds (0: whole runs), got {slice_s}")
    for name, value in (
        ("--scale", scale),
        ("--duration", duration),
        ("--clients", clients),
        ("--margin", margin),
    ):
        if value is not None and value <= 0:
            raise UsageError(f"{name} must be positive, got {value}")
    _reps(reps, None)


def _reps(given: str | int | None, default: int | None) -> int | None:
    """`--reps auto` (sequential looks), `--reps N` (a fixed count), or the lab's own."""
    if given is None:
        return default
    if str(given).strip().lower() == "auto":
        return None
    try:
        value = int(given)
    except ValueError:
        raise UsageError(f"--reps takes a number of rounds or 'auto', got {given!r}") from None
    if value <= 0:
        raise UsageError(f"--reps must be positive, got {value}")
    return value


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


def parse_size(text: str, flag: str = "--ram") -> int:
    """'8GB', '512MB', '1.5GB' -> bytes (binary units, as PostgreSQL counts them)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?B?)\s*", text.upper())
    if not m or m.group(2) not in _UNITS:
        raise UsageError(f"{flag} {text!r}: give a size such as 8GB or 512MB")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def quick_steps(lab: Lab, quick: bool) -> list[str] | None:
    """A quick run shows the steps the lab names in [quick] steps (all when it names none)."""
    return list(lab.quick.steps) if quick and lab.quick.steps else None


def select_steps(lab: Lab, names: list[str] | None) -> list[Step]:
    """The steps to run, in lab order (`all`: every one); the baseline is always included."""
    if not names or names == ["all"]:
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
