"""What a probe is: a timed run driven from Python, its context and what it needs,
and the arguments it takes from a step's `probe_args`, declared with the probe
(`Arg`: a type, a default or none, bounds) and checked when the lab loads."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import LabError
from ..servers.base import Target

ArgValue = int | float | str
KINDS: dict[type, str] = {int: "an integer", float: "a number", str: "a string"}


@dataclass(frozen=True)
class Arg:
    """One argument a probe takes: its type (int, float or str), its default (None:
    a step must give it), and the bounds of a number."""

    kind: type[int] | type[float] | type[str]
    default: ArgValue | None = None
    minimum: float | None = None
    maximum: float | None = None

    def read(self, value: Any) -> ArgValue:
        """`value` as TOML gave it, as this argument's type; ValueError saying why not.
        A float's is kept as written (300, not 300.0, in a report)."""
        if self.kind is str:
            if not isinstance(value, str):
                raise ValueError(f"expected a string, got {value!r}")
            return value
        wanted = int if self.kind is int else int | float
        if isinstance(value, bool) or not isinstance(value, wanted):
            raise ValueError(f"expected {KINDS[self.kind]}, got {value!r}")
        number: int | float = value
        if self.minimum is not None and number < self.minimum:
            raise ValueError(f"must be at least {self.minimum:g}, got {number!r}")
        if self.maximum is not None and number > self.maximum:
            raise ValueError(f"must be at most {self.maximum:g}, got {number!r}")
        return number


@dataclass(frozen=True)
class ProbeContext:
    target: Target
    duration_s: float
    args: Mapping[str, ArgValue]  # the step's probe_args, checked, with the defaults
    redis_url: str | None
    standbys: tuple[Target, ...] = ()  # the primary's hot standbys, in a [cluster] lab
    facts: dict[str, str] = field(default_factory=dict)  # what the probe measured besides

    def integer(self, key: str) -> int:
        value = self.args[key]
        assert isinstance(value, int), (key, value)  # an int Arg, checked at load
        return value

    def number(self, key: str) -> float:
        value = self.args[key]
        assert isinstance(value, int | float) and not isinstance(value, bool), (key, value)
        return float(value)

    def text(self, key: str) -> str:
        value = self.args[key]
        assert isinstance(value, str), (key, value)
        return value


@dataclass(frozen=True)
class Probe:
    run: Callable[[ProbeContext], float]
    unavailable: Callable[[ProbeContext], str | None]
    needs_standby: bool = False  # only in a lab with hot standbys ([cluster])
    unit: str | None = None  # what its rate counts, when not the lab metric's unit
    headline: tuple[str, ...] = ()  # the facts a report's summary shows beside its rate
    args: Mapping[str, Arg] = field(default_factory=dict)  # what its probe_args may hold


def always_available(_ctx: ProbeContext) -> str | None:
    """For a probe that needs only the target server."""
    return None


def read_args(name: str, probe: Probe, given: Mapping[str, Any]) -> dict[str, ArgValue]:
    """A step's `probe_args` for the probe `name`: each key one it takes, each value of
    its type and within its bounds, the required ones given; the defaults filled in.
    A LabError naming the probe and the key otherwise."""
    takes = ", ".join(probe.args) or "none"
    for key in given:
        if key not in probe.args:
            close = difflib.get_close_matches(key, list(probe.args), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"it takes: {takes}"
            raise LabError(f"probe {name!r} takes no argument {key!r} ({hint})")
    out: dict[str, ArgValue] = {}
    for key, arg in probe.args.items():
        if key not in given and arg.default is None:
            raise LabError(f"probe {name!r} needs {key!r} ({KINDS[arg.kind]})")
        try:
            out[key] = arg.read(given.get(key, arg.default))
        except ValueError as e:
            raise LabError(f"probe {name!r}: {key!r}: {e}") from None
    return out
