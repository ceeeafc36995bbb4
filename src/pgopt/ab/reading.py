"""What pgopt reads from a user's source server, and at what pace, said in one line
before it reads it (pure): a copy's size, how it is made, its pace and about how
long it takes; and `--copy-rate` and `--copy-checkpoint` read into the pace of a
physical copy.

A physical copy (pg_basebackup) starts with a checkpoint on the source. `fast` is
an immediate one: every dirty page written at once, a burst of writes on a busy
primary. `spread` (the default, and pg_basebackup's own) paces it as the source
paces its own checkpoints, so the copy may wait up to checkpoint_timeout ×
checkpoint_completion_target (4.5 min with PostgreSQL's defaults), and up to twice
that when one is under way as it asks: the checkpointer finishes it first. Measured
here (2026-12-02): a quiet source waits about 0.1 s a dirty page, 0.1 s with none,
82 s just after 60,000 rows were written, the whole 4.5 min after 600,000; a busy
one (bench/copy_cost.py, checkpoint_timeout 30 s) 27-51 s, up to 1.9 times the
bound. Then it reads the whole cluster at most at the copy rate (pg_basebackup's
--max-rate): DEFAULT_RATE unless told otherwise. pg_dump has no rate limit: a
logical copy reads as fast as one session of the source serves it (one job: a
table at a time, never `--jobs` sessions at once on a production server).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..engine.estimate import BASEBACKUP_BPS, DUMP_BPS
from ..errors import UsageError
from ..report.fmt import format_bytes
from ..words import format_duration

KIB = 1024
# gentle on a production disk (a fifth to a tenth of an SSD's sequential read), not
# absurdly slow: 10 GiB in 3.4 min, 100 GiB in 34 min. bench/copy_cost.py: a pgbench
# load on a 2-core source kept 80% of its rate during such a read [71-90%], or its
# change was within the noise, where an unthrottled one (300 MB/s here) halved it
DEFAULT_RATE = 50 * KIB * KIB
MIN_RATE, MAX_RATE = 32 * KIB, KIB * KIB * KIB  # pg_basebackup --max-rate's bounds
UNLIMITED = ("0", "max")
CHECKPOINTS = ("spread", "fast")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b?(?:/s)?)?$", re.IGNORECASE)
_UNITS = {"": KIB, "k": KIB, "m": KIB * KIB, "g": KIB * KIB * KIB}  # a bare number: kB


@dataclass(frozen=True)
class CopyPace:
    """How a physical copy reads the source: at most `rate` bytes a second (None: as
    fast as the source and this machine go), after a checkpoint of that kind."""

    rate: int | None = DEFAULT_RATE
    checkpoint: str = "spread"

    def max_rate(self) -> str | None:
        """pg_basebackup's --max-rate (kB a second), or None for no limit."""
        return None if self.rate is None else str(self.rate // KIB)

    def described(self) -> str:
        return "unthrottled" if self.rate is None else f"at most {format_bytes(self.rate)}/s"


DEFAULT_PACE = CopyPace()


def parse_copy_rate(text: str) -> int | None:
    """`--copy-rate` in bytes a second, None for no limit (0, max); pg_basebackup's
    units (a bare number is kB a second, k, M) and G. One clear error otherwise."""
    value = text.strip()
    if value.lower() in UNLIMITED:
        return None
    match = _RATE.match(value)
    if match is None:
        raise UsageError(
            f"--copy-rate {text}: expected a rate such as 50M or 1G (a bare number is kB a "
            "second, as pg_basebackup's --max-rate), or 0 or max for no limit"
        )
    rate = round(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if rate == 0:
        return None
    if not MIN_RATE <= rate <= MAX_RATE:
        raise UsageError(
            f"--copy-rate {text}: pg_basebackup limits a copy to between 32k and 1G a "
            "second (0 or max: no limit)"
        )
    return rate - rate % KIB


def copy_pace(rate: str | None, checkpoint: str | None) -> CopyPace:
    """The pace `--copy-rate` and `--copy-checkpoint` ask for, the defaults where not."""
    return CopyPace(
        DEFAULT_RATE if rate is None else parse_copy_rate(rate), checkpoint or CHECKPOINTS[0]
    )


@dataclass(frozen=True)
class SourceRead:
    """What a copy reads from the source: `how` (`physical`, `logical` or `sampled`),
    `read_bytes` read there, `what` it copies, the pace of a physical copy and its
    checkpoint's longest wait, a sample's percent."""

    how: str
    read_bytes: int
    where: str  # the source, its password redacted
    pace: CopyPace = DEFAULT_PACE
    checkpoint_s: float = 0.0  # a spread checkpoint's longest wait
    checkpoint_setting: str = ""  # 'checkpoint_timeout 5min × checkpoint_completion_target 0.9'
    what: str = "its database"
    sample: float | None = None

    @property
    def transfer_s(self) -> float:
        """The copy's own seconds: its size at its rate, or at this machine's speed."""
        if self.how == "physical":
            rate = min(self.pace.rate or BASEBACKUP_BPS, BASEBACKUP_BPS)
            return self.read_bytes / rate
        return self.read_bytes / DUMP_BPS

    @property
    def spread(self) -> bool:
        return self.how == "physical" and self.pace.checkpoint == "spread"

    def describe(self) -> str:
        """'2.1 GiB from SOURCE (pg_basebackup of its cluster, at most 50 MiB/s: about
        45 s, after a spread checkpoint: up to 4.5 min ...)': what follows 'will read'."""
        size, about = format_bytes(self.read_bytes), format_duration(self.transfer_s)
        what = self.what
        if self.how == "physical":
            if self.spread:
                first = (
                    f"after a spread checkpoint of up to {wait_text(self.checkpoint_s)} "
                    f"({self.checkpoint_setting}), twice that when one is under way as on a "
                    "busy source; --copy-checkpoint fast: at once, its dirty pages written in "
                    "a burst"
                )
            else:
                first = "after a fast checkpoint: the source's dirty pages written at once"
            return (
                f"{size} from {self.where} (pg_basebackup of its whole cluster, "
                f"{self.pace.described()}: about {about}, {first})"
            )
        if self.how == "sampled":
            return (
                f"{size} from {self.where} (pg_dump of the schema of {what}, then "
                f"{self.sample:g}% of the rows of the tables of 1 MiB or more in one "
                "session: TABLESAMPLE BERNOULLI reads every page of them; no rate limit, "
                f"pg_dump and COPY have none: about {about})"
            )
        return (
            f"{size} from {self.where} (pg_dump of {what} in one snapshot, one job: a "
            f"table at a time; no rate limit, pg_dump has none: about {about})"
        )


def wait_text(seconds: float) -> str:
    """'40 s', '4.5 min', '27 min': a checkpoint's longest wait."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.2g} min"


def checkpoint_wait(timeout_s: float, target: float) -> tuple[float, str]:
    """A spread checkpoint's longest wait, and the settings it comes from."""
    shown = f"{timeout_s / 60:g}min" if timeout_s % 60 == 0 else f"{timeout_s:g}s"
    return (
        timeout_s * target,
        f"checkpoint_timeout {shown} × checkpoint_completion_target {target:g}",
    )


def synthesis_reads(where: str, watch_s: float, capture_s: float) -> str | None:
    """What a synthesized workload reads from the source over a watch or a capture of
    its log, and for how long (what follows 'will read'); None without either (a few
    queries of its statistics and catalogs, or a log file given)."""
    text = f"from {where}: its pg_stat_statements, catalogs and column statistics"
    if capture_s > 0:
        return (
            f"{text}, and have it log a share of its transactions for {capture_s:g} s (its "
            "log settings set with ALTER SYSTEM and put back after), the lines read back "
            "over SQL"
        )
    if watch_s <= 0:
        return None
    return (
        f"{text}, and watch its sessions for {watch_s:g} s: pg_stat_activity twice a "
        "second and a hundred times a second for the calls sent with literals (about 2% "
        "of a 2-core source's throughput, bench/watch_cost.py), then the keys of the rows "
        "written meanwhile (at most about 100 MB of each table), in one read-only session"
    )
