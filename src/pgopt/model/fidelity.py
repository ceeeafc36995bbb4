"""A replay's fidelity to its source, as result.json records it (`fidelity`, pgopt ab
--synthesize): per statement, the source's work a call beside the replay's, and the
verdict with its reasons. replay/fidelity.py computes it; report/replay.py shows it."""

from __future__ import annotations

from dataclasses import dataclass

from .absent import absent


@dataclass(frozen=True)
class StatementFidelity:
    """One replayed statement against the source's: per call, rows, server time and
    shared blocks (replay None: it did not run in A's runs)."""

    name: str
    query: str
    share: float  # of the source's execution time
    source_calls: int
    source_rows: float
    source_ms: float
    source_blocks: float
    replay_calls: int
    replay_rows: float | None
    replay_ms: float | None
    replay_blocks: float | None
    judged: bool  # heavy enough to count in the verdict
    within: bool  # rows and time per call within the thresholds
    why: str = ""
    source_blocks_read: float | None = absent()  # of the blocks a call, read (cache misses)
    replay_blocks_read: float | None = absent()


@dataclass(frozen=True)
class Fidelity:
    """Whether the replay did the work the source does: `faithful`, `partial` or
    `unfaithful`, with each reason, by the thresholds recorded beside it."""

    verdict: str
    reasons: tuple[str, ...]
    replayed_share: float
    statements: tuple[StatementFidelity, ...]
    thresholds: dict[str, float]
    source_statements_per_commit: float | None = None
    replay_statements_per_commit: float | None = None
    source_clients: int | None = None
    replay_clients: int | None = None
    source_protocol: str | None = None
    replay_protocol: str | None = None
    dropped_writes: tuple[tuple[str, str, float], ...] = ()
    source_statements_per_commit_from: str | None = absent()  # None: unknown
    source_clients_from: str | None = absent()
    database_share: float | None = absent()  # of the source's busy sessions' time
    database_share_from: str | None = absent()
    values_from: str | None = absent()  # where the replay's values came from
    host_busy: float | None = absent()  # the source's machine's CPUs over the watch, 0-1
    database_cpu_share: float | None = absent()  # the source server's share of that
