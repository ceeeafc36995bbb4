"""The options every command that runs a lab shares (`lab run`, `ab`, `tune --measure`,
advise's proofs), typed once: the command line reads them into RunOptions, and a
caller that runs a lab from code (a proof, a measurement) builds one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..params import check_overrides
from ..servers.dsn import hide_passwords
from .across import Pair, find_sides


@dataclass(frozen=True)
class RunOptions:
    quick: bool = False
    duration: int | None = None  # seconds per timed run
    warmup: int | None = None  # seconds of the workload before each (None: the lab's)
    slice_s: int | None = None  # seconds of a slice of a run (0: whole; None: params.SLICE_S)
    reps: str | int | None = None  # 'auto', a count, or the lab's own
    margin: float | None = None  # percent
    clients: int | None = None
    dsn: str | None = None  # the user's server to run on, instead of a throwaway one
    allow_settings: bool = False
    pg_bin: str | None = None
    out_dir: Path | None = None
    seed: int = 1
    workdir: Path | None = None
    keep: bool = False
    no_sampler: bool = False
    latencies: str = "first"
    dry_run: bool = False
    scale: float | None = None
    steps: str | None = None  # comma-separated
    ram: str | None = None
    redis_url: str | None = None
    standby_dsns: tuple[str, ...] = ()
    a_pg_bin: str | None = None
    b_pg_bin: str | None = None
    sides: Pair | None = None  # the two servers of a_pg_bin/b_pg_bin, once found

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> RunOptions:
        """The run options among a command's parsed options (by their names)."""
        names = {f.name for f in fields(cls)} - {"sides"}
        given = {k: v for k, v in options.items() if k in names}
        if "standby_dsns" in given:
            given["standby_dsns"] = tuple(given["standby_dsns"] or ())
        return cls(**given)

    def checked(self) -> RunOptions:
        """These options, refused where a number or a combination makes no sense (before
        any server starts); every DSN's password kept out of all output."""
        check_overrides(
            scale=self.scale,
            duration=self.duration,
            clients=self.clients,
            margin=self.margin,
            reps=self.reps,
            slice_s=self.slice_s,
        )
        if self.allow_settings and not self.dsn:
            raise UsageError("--allow-settings goes with --dsn")
        if self.standby_dsns and not self.dsn:
            raise UsageError("--standby-dsn goes with --dsn (the primary of those standbys)")
        hide_passwords(self.dsn, *self.standby_dsns)
        return self

    def with_sides(self) -> RunOptions:
        """These options with the sides of --a-pg-bin/--b-pg-bin found (once)."""
        if self.sides is not None or not (self.a_pg_bin or self.b_pg_bin):
            return self
        return replace(self, sides=find_sides(self.a_pg_bin, self.b_pg_bin, self.pg_bin, self.dsn))
