"""Name the bottleneck of a step from measurement, and say what changed from the step before.

Pure functions over wait shares and per-transaction statistics, e.g.
`IO:WalSync 38% -> 0%; CPU 41% -> 77%; WAL bytes/tx 1.2k -> 1.2k`.
"""

from __future__ import annotations

from collections.abc import Mapping

TOP = 3
NOTABLE_SHARE = 0.02
NOTABLE_CHANGE = 0.05

FIGURES = (
    ("server_cpu_us_per_tx", "server CPU µs/tx"),
    ("wal_bytes_per_tx", "WAL bytes/tx"),
    ("blks_read_per_tx", "blocks read/tx"),
    ("blks_hit_per_tx", "blocks hit/tx"),
    ("wal_bytes_per_run", "WAL bytes/run"),
    ("blks_read_per_run", "blocks read/run"),
)


def top_waits(shares: Mapping[str, float], n: int = TOP) -> list[tuple[str, float]]:
    """The n largest wait classes (CPU included), largest first."""
    return sorted(shares.items(), key=lambda kv: kv[1], reverse=True)[:n]


def describe_top(shares: Mapping[str, float]) -> str:
    return ", ".join(f"{name} {share:.0%}" for name, share in top_waits(shares)) or "no samples"


def _compact(value: float) -> str:
    if abs(value) >= 1e6:
        return f"{value / 1e6:.1f}M" if abs(value) < 1e9 else f"{value / 1e9:.1f}G"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.1f}" if value % 1 else f"{value:.0f}"


def same_spelling(previous: Mapping[str, float], shares: Mapping[str, float]) -> dict[str, float]:
    """`previous` with each wait event spelt as `shares` spells it: PostgreSQL 17
    renamed some (IO:WALSync became IO:WalSync), and a step on 15 against one on 18
    is the same wait."""
    spelling = {name.lower(): name for name in shares}
    out: dict[str, float] = {}
    for name, share in previous.items():
        key = spelling.get(name.lower(), name)
        out[key] = out.get(key, 0.0) + share
    return out


def why_line(
    shares: Mapping[str, float],
    previous_shares: Mapping[str, float] | None,
    figures: Mapping[str, float],
    previous_figures: Mapping[str, float] | None,
) -> str:
    """One line: the wait classes that moved most, then the per-transaction figures."""
    if previous_shares is None:
        parts = [describe_top(shares)]
    else:
        previous_shares = same_spelling(previous_shares, shares)
        names = {n for n, s in shares.items() if s >= NOTABLE_SHARE}
        names |= {n for n, s in previous_shares.items() if s >= NOTABLE_SHARE}
        # largest move first; equal moves by name, so the line is the same every time
        moves = sorted(
            ((n, previous_shares.get(n, 0.0), shares.get(n, 0.0)) for n in names),
            key=lambda m: (-round(abs(m[2] - m[1]), 4), m[0]),
        )
        parts = [
            f"{n} {a:.0%} -> {b:.0%}" for n, a, b in moves[:TOP] if abs(b - a) >= NOTABLE_CHANGE
        ] or ["waits unchanged"]
    for key, label in FIGURES:
        if key not in figures:
            continue
        now = figures[key]
        if previous_figures is not None and key in previous_figures:
            before = previous_figures[key]
            if before or now:
                parts.append(f"{label} {_compact(before)} -> {_compact(now)}")
        elif now:
            parts.append(f"{label} {_compact(now)}")
    return "; ".join(parts)
