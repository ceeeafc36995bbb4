"""What the observer saw, turned into figures (pure): wait shares from sample counts,
statistics differences between two snapshots, and the per-transaction figures
that compare across steps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..model.observation import Observation, SamplerCost
from ..replay.tag import tag_of

TOP_STATEMENTS = 5
Snapshot = dict[str, Any]


def shares(counts: Counter[str]) -> dict[str, float]:
    """Counts as fractions of all backend-samples, largest first."""
    total = sum(counts.values())
    if not total:
        return {}
    return {k: round(v / total, 4) for k, v in counts.most_common()}


def delta(before: Snapshot, after: Snapshot) -> dict[str, Any]:
    """after - before, section by section; statements: the top ones by time spent, and
    every statement a replay tagged."""
    out: dict[str, Any] = {}
    for section in ("database", "wal"):
        if section in after:
            out[section] = {
                k: v - before.get(section, {}).get(k, 0) for k, v in after[section].items()
            }
    if "io" in after:
        out["io"] = {}
        for backend, counters in after["io"].items():
            base = before.get("io", {}).get(backend, {})
            diff = {k: v - base.get(k, 0) for k, v in counters.items()}
            if any(diff.values()):
                out["io"][backend] = diff
    out["checkpoints"] = after.get("checkpoints", 0) - before.get("checkpoints", 0)
    if "statements" in after:
        out["statements"] = _statement_delta(before.get("statements", {}), after["statements"])
    return out


def _statement_delta(
    before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    rows = []
    for qid, stat in after.items():
        base = before.get(qid, {})
        calls = stat["calls"] - base.get("calls", 0)
        if calls <= 0:
            continue
        total = stat["total_ms"] - base.get("total_ms", 0.0)
        rows.append(
            {
                "query": stat["query"],
                "calls": calls,
                "total_ms": round(total, 3),
                "mean_ms": round(total / calls, 4),
                "rows": stat["rows"] - base.get("rows", 0),
                "shared_blks_hit": stat["shared_blks_hit"] - base.get("shared_blks_hit", 0),
                "shared_blks_read": stat["shared_blks_read"] - base.get("shared_blks_read", 0),
            }
        )
    rows.sort(key=lambda r: r["total_ms"], reverse=True)
    # the top ones, and every statement a replay tagged (replay/fidelity.py reads them all)
    return [r for i, r in enumerate(rows) if i < TOP_STATEMENTS or tag_of(r["query"])]


def unit_figures(stats: dict[str, Any], transactions: int | None) -> dict[str, float]:
    """The figures that compare across steps: WAL bytes and blocks per transaction, or
    per run for work that is not counted in transactions (timed phases)."""
    per, div = ("tx", transactions) if transactions else ("run", 1)
    if not div or div < 0:
        return {}
    db = stats.get("database", {})
    out = {
        f"blks_read_per_{per}": db.get("blks_read", 0) / div,
        f"blks_hit_per_{per}": db.get("blks_hit", 0) / div,
    }
    if "wal" in stats:
        out[f"wal_bytes_per_{per}"] = stats["wal"].get("wal_bytes", 0) / div
        out[f"wal_fpi_per_{per}"] = stats["wal"].get("wal_fpi", 0) / div
    return {k: round(v, 3) for k, v in out.items()}


def merged_stats(deltas: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The statistics differences of consecutive slices of one step's run, as one:
    counters added section by section, statements joined by their text (calls, time,
    rows and blocks added; the mean a call computed again)."""
    out: dict[str, Any] = {}
    for section in ("database", "wal"):
        parts = [d[section] for d in deltas if section in d]
        if parts:
            out[section] = _added(parts)
    ios = [d["io"] for d in deltas if "io" in d]
    if ios:
        backends = dict.fromkeys(b for io in ios for b in io)
        out["io"] = {b: _added([io[b] for io in ios if b in io]) for b in backends}
    out["checkpoints"] = sum(d.get("checkpoints", 0) for d in deltas)
    statements = [d["statements"] for d in deltas if "statements" in d]
    if statements:
        out["statements"] = _statements_joined(statements)
    return out


def _added(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    keys = dict.fromkeys(k for part in parts for k in part)
    return {k: sum(part.get(k, 0) for part in parts) for k in keys}


def _statements_joined(slices: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    joined: dict[str, dict[str, Any]] = {}
    for rows in slices:
        for row in rows:
            into = joined.setdefault(row["query"], {"query": row["query"]})
            for key in ("calls", "total_ms", "rows", "shared_blks_hit", "shared_blks_read"):
                into[key] = into.get(key, 0) + row[key]
    out = []
    for row in joined.values():
        row["total_ms"] = round(row["total_ms"], 3)
        row["mean_ms"] = round(row["total_ms"] / row["calls"], 4)
        out.append(row)
    out.sort(key=lambda r: r["total_ms"], reverse=True)
    return [r for i, r in enumerate(out) if i < TOP_STATEMENTS or tag_of(r["query"])]


def joined_observation(slices: Sequence[Observation]) -> Observation:
    """What the observer saw in each slice of one step's run, as one observation."""
    out = Observation()
    for obs in slices:
        out.waits.update(obs.waits)
        out.samples += obs.samples
        out.problems += [p for p in obs.problems if p not in out.problems]
        out.wall_s = round(out.wall_s + obs.wall_s, 3)
    out.stats = merged_stats([obs.stats for obs in slices])
    costs = [obs.sampler for obs in slices if obs.sampler is not None]
    if costs:
        servers = [c.server_cpu_s for c in costs]
        out.sampler = SamplerCost(
            samples=sum(c.samples for c in costs),
            client_cpu_s=sum(c.client_cpu_s for c in costs),
            server_cpu_s=None if None in servers else sum(s for s in servers if s is not None),
            interval_s=costs[0].interval_s,
        )
    return out
