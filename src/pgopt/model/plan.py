"""The plan of a lab run, as engine/plan.py decides it before anything runs (pure
records): segments of steps that share rounds, each round's random order and its
pgbench seed, the looks, and the steps skipped with why."""

from __future__ import annotations

from dataclasses import dataclass

from ..params import LOOKS
from ..words import plural


@dataclass(frozen=True)
class Round:
    number: int  # 1-based within its segment
    order: tuple[str, ...]  # step names, in the order they run
    pgbench_seed: int  # the same for every step of the round
    slices: int = 1  # each step's run cut into this many interleaved slices (1: whole)


@dataclass(frozen=True)
class Segment:
    index: int
    steps: tuple[str, ...]
    rounds: tuple[Round, ...]  # the most this segment may run
    looks: tuple[int, ...]  # after these rounds, stop if every comparison is decided
    restart_each_run: bool  # a fresh postmaster before every timed run
    why_restart: str = ""
    slice_s: int = 0  # seconds of a slice in its sliced rounds (0: every run whole)
    why_whole: str = ""  # why its runs are not sliced

    def describe_slicing(self) -> str:
        """How its runs are cut, in words."""
        if not self.slice_s:
            return f"whole runs ({self.why_whole})" if self.why_whole else "whole runs"
        whole = [r.number for r in self.rounds if r.slices == 1]
        text = f"runs in interleaved slices of {self.slice_s}s"
        if whole:
            text += f" (round {', '.join(map(str, whole))} whole: pgbench's latencies)"
        # engine/slices.py `crowded`: known only once the data is built
        crowded = "the steps' data together, once built, is more than shared_buffers"
        return f"{text}, or whole runs where {crowded}"


@dataclass(frozen=True)
class Plan:
    seed: int
    sequential: bool
    alpha: float  # significance level of each look
    margin: float  # the smallest relative change that matters
    segments: tuple[Segment, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (step, why it cannot run here)

    def describe(self) -> list[str]:
        """The plan in lines a person reads (`--dry-run`)."""
        mode = (
            f"sequential looks after rounds {', '.join(map(str, LOOKS))} at alpha {self.alpha}"
            if self.sequential
            else f"{plural(len(self.segments[0].rounds), 'round')} at alpha {self.alpha}"
        )
        lines = [f"seed {self.seed}; {mode}; margin ±{self.margin:.0%}"]
        lines += [f"skipped {name}: {reason}" for name, reason in self.skipped]
        for segment in self.segments:
            restart = f"; restart before every run ({segment.why_restart})"
            lines.append(
                f"segment {segment.index + 1}: {', '.join(segment.steps)}"
                + (restart if segment.restart_each_run else "")
                + f"; {segment.describe_slicing()}"
            )
            for r in segment.rounds:
                sliced = f", in {r.slices} slices of {segment.slice_s}s" if r.slices > 1 else ""
                lines.append(
                    f"  round {r.number}: {' → '.join(r.order)} "
                    f"(pgbench seed {r.pgbench_seed}{sliced})"
                )
        return lines
