"""Build pgbench argument lists (never a shell string) from a run description."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from ..errors import LabError


class QueryMode(StrEnum):
    """pgbench's --protocol: how each statement is sent."""

    SIMPLE = "simple"
    EXTENDED = "extended"
    PREPARED = "prepared"


# Extra pgbench flags a lab may pass; everything else pgopt decides itself.
SAFE_FLAGS = {
    "-C": False,
    "--connect": False,
    "-R": True,
    "--rate": True,
    "-L": True,
    "--latency-limit": True,
    "--max-tries": True,
    "--random-seed": True,
    "--failures-detailed": False,
    "--verbose-errors": False,
}


@dataclass(frozen=True)
class ScriptRef:
    """A pgbench script file, or a builtin (`tpcb-like`, `select-only`, ...), with a weight."""

    path: Path | None = None
    builtin: str | None = None
    weight: int = 1

    @property
    def name(self) -> str:
        """How a report names it: its file's name, or the builtin's."""
        return self.path.name if self.path is not None else str(self.builtin)

    def arg(self) -> list[str]:
        if self.builtin is not None:
            return ["-b", f"{self.builtin}@{self.weight}"]
        return ["-f", f"{self.path}@{self.weight}"]


@dataclass(frozen=True)
class PgbenchSpec:
    """Everything that defines one pgbench run."""

    scripts: tuple[ScriptRef, ...]
    mode: QueryMode = QueryMode.SIMPLE
    clients: int = 1
    threads: int = 1
    duration_s: int | None = 10
    transactions: int | None = None
    variables: Mapping[str, str] = field(default_factory=dict)
    extra_args: tuple[str, ...] = ()
    log_prefix: Path | None = None
    log_sampling_rate: float = 1.0  # share of transactions written to the -l log
    report_statements: bool = True


def check_extra_args(args: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Accept only flags from SAFE_FLAGS (as `--flag=value`, `--flag value` or `-R value`)."""
    out: list[str] = []
    items = list(args)
    i = 0
    while i < len(items):
        arg = str(items[i])
        name, eq, _ = arg.partition("=")
        if name not in SAFE_FLAGS:
            raise LabError(
                f"pgbench flag {arg!r} is not allowed (allowed: {', '.join(SAFE_FLAGS)})"
            )
        out.append(arg)
        if SAFE_FLAGS[name] and not eq:
            if i + 1 >= len(items):
                raise LabError(f"pgbench flag {arg!r} needs a value")
            out.append(str(items[i + 1]))
            i += 1
        i += 1
    return tuple(out)


def build_args(pgbench: Path, spec: PgbenchSpec) -> list[str]:
    """The argument list for `spec`; the connection comes from the environment."""
    if not spec.scripts:
        raise LabError("a pgbench run needs at least one script")
    if (spec.duration_s is None) == (spec.transactions is None):
        raise LabError("a pgbench run needs either a duration or a transaction count")
    args = [
        str(pgbench),
        "--no-vacuum",
        "--protocol",
        spec.mode,
        "--client",
        str(spec.clients),
        "--jobs",
        str(max(1, min(spec.threads, spec.clients))),
    ]
    if spec.duration_s is not None:
        args += ["--time", str(spec.duration_s)]
    else:
        args += ["--transactions", str(spec.transactions)]
    if spec.report_statements:
        args.append("--report-per-command")
    if spec.log_prefix is not None:
        args += ["--log", f"--log-prefix={spec.log_prefix}"]
        if spec.log_sampling_rate < 1.0:
            args.append(f"--sampling-rate={spec.log_sampling_rate:.4g}")
    for name, value in sorted(spec.variables.items()):
        args += ["--define", f"{name}={value}"]
    for script in spec.scripts:
        args += script.arg()
    args += list(spec.extra_args)
    return args
