"""Whether a replay did the work the source does (pure): a check that can fail.

Each replayed statement is found in A's runs by its tag (`/* pgopt q01 */`, in the
replay's pg_stat_statements of each run) and compared with the source's own row,
per call: rows returned, server time, shared blocks. For the whole workload: the
share of the source's execution time replayed, the writes left out, statements
per commit, the client count and the protocol.

The verdict, by the thresholds in THRESHOLDS (each in the report beside it):
- faithful: at least 90% of the source's time replayed, no table's writes left
  out, every replayed statement with 1% or more of the source's time within 1.5x
  of its rows per call (or less than half a row apart), 2x of its time per call (or
  less than 20 µs apart: the ratio of two such short times is noise) and 2x of its
  shared blocks a call (hit and read: one a buffer access, so a plan that visits a
  page once per row counts it as often; or less than 2 apart) and 2x of the blocks a
  call it read into shared buffers (the cache's misses: a replay that touches more of
  the data than the source's clients do, or a server with less memory, misses where
  the source hits; or less than 0.6 apart, or 1% of the source's blocks a call: a
  faithful replay's copy starts with its buffers empty where the source's are full,
  and its runs miss up to about half a block a call more), statements per commit
  within 1.5x of the source's, the source's clients and protocol matched;
  the transaction shape and the clients known (a watch that saw work, what the
  source keeps since a reset, a log capture; the clients also from --clients),
  never assumed;
- partial: at least half of the source's time replayed by statements within those
  bounds;
- unfaithful: less.

How the bounds were set: replays of sources whose values the replay knows (log
captures; watches of clients that send literals), several of each, give each
figure's spread of replay against source (bench/fidelity_spread.py). Each ratio is
the 99th percentile of |ln(replay / source)| where the source's figure is large,
rounded up to a tenth; each floor the 99th percentile of the floor each
statement-replay needs under that ratio, rounded up to one significant digit; no
bound set below its value before (only faithful replays were measured, not what a
tighter bound would catch); the share of the blocks kept where it lowers the
floor. So a faithful replay's statement is within each bound in at least 99% of
statement-replays. The figures, the command and the machine: docs/method.md,
"How the fidelity thresholds were set".

Where statements are off, the first reason names those whose values were drawn
from the data's statistics rather than the clients' calls, and what would tell.
A statement whose time a call is one call's wait (its slowest call in
pg_stat_statements) has that said in its reason, and it still counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..lab.spec import ReplaySpec, SourceFigures
from ..model.fidelity import Fidelity, StatementFidelity
from ..model.result import Run
from ..source.shape import TELL_CLIENTS, TELL_PROTOCOL, TELL_SHAPE, TELL_VALUES
from .tag import tag_of

THRESHOLDS = {
    "replayed_share": 0.90,  # of the source's execution time
    "rows_ratio": 1.5,  # rows per call, either way
    "rows_floor": 0.5,  # rows a call apart under which the ratio is not judged
    "time_ratio": 2.0,  # server time per call, either way
    "time_floor_ms": 0.02,  # a difference under this a call is noise, not a verdict
    "blocks_ratio": 2.0,  # shared blocks a call (hit and read), either way
    "blocks_floor": 2.0,  # blocks a call apart under which the ratio is not judged
    "misses_ratio": 2.0,  # shared blocks a call read into shared buffers, either way
    "misses_floor": 0.6,  # ... apart under which the ratio is not judged,
    "misses_share": 0.01,  # ... or under this share of the source's blocks a call
    "judged_share": 0.01,  # statements below this share of the time do not count
    "per_commit_ratio": 1.5,  # statements per commit, either way
    "partial_share": 0.50,  # of the source's time, replayed within the bounds
}


@dataclass
class _Totals:
    calls: int = 0
    total_ms: float = 0.0
    rows: int = 0
    blocks: int = 0
    read: int = 0


def replay_totals(runs: Sequence[Run]) -> tuple[dict[str, _Totals], int]:
    """Each tagged statement's totals over `runs`, and their transactions."""
    totals: dict[str, _Totals] = {}
    commits = 0
    for run in runs:
        stats: dict[str, Any] = run.stats or {}
        # each run of a replay's script is one transaction: pgbench's count is the
        # commits (the server's xact_commit also counts each parallel worker's)
        if run.transactions is not None:
            commits += run.transactions
        else:
            commits += int(stats.get("database", {}).get("xact_commit", 0))
        for row in stats.get("statements", ()):
            name = tag_of(str(row.get("query", "")))
            if name is None:
                continue
            t = totals.setdefault(name, _Totals())
            t.calls += int(row["calls"])
            t.total_ms += float(row["total_ms"])
            t.rows += int(row["rows"])
            read = int(row.get("shared_blks_read", 0))
            t.blocks += int(row.get("shared_blks_hit", 0)) + read
            t.read += read
    return totals, commits


def _within(replay: float, source: float, ratio: float, floor: float) -> bool:
    """replay within `ratio` of source either way, or less than `floor` apart."""
    if abs(replay - source) < floor:
        return True
    if replay <= 0 or source <= 0:
        return False
    return 1 / ratio <= replay / source <= ratio


def _one_wait(source: SourceFigures, replay_ms: float) -> str:
    """Where the source's time a call is its slowest call's (a lock waited for, a
    deadlock's second before it was broken, a stall): that call, and the source's
    other calls, as the replay's. Said, not forgiven: the replay met no such wait."""
    if source.calls < 2 or source.max_ms <= 0:
        return ""
    rest = (source.total_ms - source.max_ms) / (source.calls - 1)
    if not _within(replay_ms, rest, THRESHOLDS["time_ratio"], THRESHOLDS["time_floor_ms"]):
        return ""
    return (
        f" (its slowest call took {source.max_ms:,.0f} ms, its other calls {rest:.3g} a call "
        "as the replay's: one call waited, on a lock, a deadlock or a stall, and the replay "
        "met no such wait)"
    )


def _statement(source: SourceFigures, replay: _Totals | None) -> StatementFidelity:
    calls = source.calls or 1
    s_rows, s_ms, s_blocks = source.rows / calls, source.total_ms / calls, source.blocks / calls
    s_read = source.blocks_read / calls
    judged = source.share >= THRESHOLDS["judged_share"]
    if replay is None or replay.calls == 0:
        return StatementFidelity(
            source.name, source.query, source.share, source.calls, s_rows, s_ms, s_blocks,
            0, None, None, None, judged, False,
            "; ".join(filter(None, ("it did not run in A's runs", source.unverified))),
            s_read, None,
        )  # fmt: skip
    r_rows, r_ms = replay.rows / replay.calls, replay.total_ms / replay.calls
    r_blocks, r_read = replay.blocks / replay.calls, replay.read / replay.calls
    why = [source.unverified] if source.unverified else []
    if not _within(r_rows, s_rows, THRESHOLDS["rows_ratio"], THRESHOLDS["rows_floor"]):
        why.append(f"{r_rows:.3g} rows a call against the source's {s_rows:.3g}")
    if not _within(r_ms, s_ms, THRESHOLDS["time_ratio"], THRESHOLDS["time_floor_ms"]):
        why.append(f"{r_ms:.3g} ms a call against the source's {s_ms:.3g}{_one_wait(source, r_ms)}")
    if s_blocks > 0 and not _within(
        r_blocks, s_blocks, THRESHOLDS["blocks_ratio"], THRESHOLDS["blocks_floor"]
    ):
        why.append(f"{r_blocks:.3g} blocks a call against the source's {s_blocks:.3g}")
    # a miss costs tens of hits (a copy from the kernel's cache into shared buffers, an
    # estimate not measured here): under 1% of the blocks a call missed does not count
    misses_floor = max(THRESHOLDS["misses_floor"], THRESHOLDS["misses_share"] * s_blocks)
    if s_blocks > 0 and not _within(r_read, s_read, THRESHOLDS["misses_ratio"], misses_floor):
        why.append(
            f"{r_read:.3g} blocks a call read into shared buffers against the source's "
            f"{s_read:.3g} (the replay's cache misses differ: its values touch more or "
            "less of the data than the source's clients ask for, which a log capture "
            "(--source-capture, --source-log) holds, or a watch of clients that send "
            "literals; its runs start from a copy whose buffers are cold, which --warmup "
            "fills; or its server has other memory)"
        )
    return StatementFidelity(
        source.name, source.query, source.share, source.calls, s_rows, s_ms, s_blocks,
        replay.calls, r_rows, r_ms, r_blocks, judged, not why, "; ".join(why),
        s_read, r_read,
    )  # fmt: skip


def _values_unseen(spec: ReplaySpec, off: Sequence[StatementFidelity]) -> str:
    """Why statements off the source's work may be so: their values were drawn from the
    data's statistics, not taken from the clients' calls; and what would tell."""
    drawn = {s.name for s in spec.statements if s.values_from_data}
    named = [r for r in off if r.name in drawn and r.replay_calls]
    if not named:
        return ""
    shown = ", ".join(r.name for r in named[:3])
    if len(named) > 3:
        shown += f" and {len(named) - 3} more"
    hidden = (
        ": the clients send prepared statements, whose values a watch cannot see"
        if spec.protocol == "prepared"
        else ""
    )
    return (
        f"{shown} ({sum(r.share for r in named):.0%} of the source's time) draw their "
        "values from the data's statistics, which know the values that exist, not which "
        f"the clients ask for (hot keys, recent rows){hidden}; the clients' own values "
        f"would tell: {TELL_VALUES}"
    )


def assess(spec: ReplaySpec, runs: Sequence[Run]) -> Fidelity:
    """The fidelity of the replay A's `runs` ran, against `spec`'s source."""
    totals, commits = replay_totals(runs)
    rows = tuple(_statement(s, totals.get(s.name)) for s in spec.statements)
    calls = sum(t.calls for t in totals.values())
    replay_per_commit = calls / commits if commits else None
    reasons = []
    if spec.replayed_share < THRESHOLDS["replayed_share"]:
        reasons.append(
            f"{spec.replayed_share:.0%} of the source's execution time replayed (at least "
            f"{THRESHOLDS['replayed_share']:.0%} for faithful)"
        )
    for query, why, share in spec.dropped_writes:
        reasons.append(f"a write left out ({share:.1%} of the time): {query[:80]}: {why}")
    off = [r for r in rows if r.judged and not r.within]
    unseen = _values_unseen(spec, off)
    if unseen:
        reasons.append(unseen)
    for r in off:
        reasons.append(f"{r.name}: {r.why}")
    source_per_commit = spec.statements_per_commit
    if (
        source_per_commit
        and replay_per_commit
        and not _within(replay_per_commit, source_per_commit, THRESHOLDS["per_commit_ratio"], 0.0)
    ):
        reasons.append(
            f"{replay_per_commit:.3g} statements a commit against the source's "
            f"{source_per_commit:.3g}"
        )
    if source_per_commit is None:
        reasons.append(
            "the source's transaction shape is unknown: each statement replayed as its own "
            f"transaction (what would tell: {TELL_SHAPE})"
        )
    if spec.clients is None and not spec.clients_given:
        fewest = (
            f", about the {spec.clients_estimated} at once its sessions' time connected "
            "since the reset gives"
            if spec.clients_estimated
            else ""
        )
        reasons.append(
            f"the source's clients are unknown: the replay ran {spec.replay_clients}"
            f"{fewest} (what would tell: {TELL_CLIENTS})"
        )
    if spec.protocol is None and not spec.protocol_given:
        reasons.append(
            f"the source's protocol is unknown: the replay sent -M {spec.replay_protocol} "
            f"(what would tell: {TELL_PROTOCOL})"
        )
    differs = []
    if spec.clients is not None and spec.clients != spec.replay_clients:
        differs.append(f"{spec.replay_clients} clients against the source's {spec.clients}")
    if spec.protocol is not None and spec.protocol != spec.replay_protocol:
        differs.append(f"-M {spec.replay_protocol} against the source's {spec.protocol}")
    reasons += differs
    within_share = sum(r.share for r in rows if r.within)
    if not reasons:
        verdict = "faithful"
    elif within_share >= THRESHOLDS["partial_share"]:
        verdict = "partial"
    else:
        verdict = "unfaithful"
        reasons.append(
            f"the statements within the bounds make up {within_share:.0%} of the source's "
            f"time (at least {THRESHOLDS['partial_share']:.0%} for partial)"
        )
    return Fidelity(
        verdict=verdict,
        reasons=tuple(reasons),
        replayed_share=spec.replayed_share,
        statements=rows,
        thresholds=dict(THRESHOLDS),
        source_statements_per_commit=source_per_commit,
        replay_statements_per_commit=replay_per_commit,
        source_clients=spec.clients,
        replay_clients=spec.replay_clients,
        source_protocol=spec.protocol,
        replay_protocol=spec.replay_protocol,
        dropped_writes=spec.dropped_writes,
        source_statements_per_commit_from=spec.per_commit_from or None,
        source_clients_from=spec.clients_from or None,
        database_share=spec.database_share,
        database_share_from=spec.database_share_from or None,
        values_from=spec.values_from or None,
        host_busy=spec.host_busy,
        database_cpu_share=spec.database_cpu_share,
    )
