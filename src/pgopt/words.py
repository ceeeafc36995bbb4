"""Counts, durations and statements in plain text, the same everywhere (pure): '1 run',
'3 runs', '12 minutes', so that no output says '1 minutes'; a statement on one line."""

from __future__ import annotations

IRREGULAR = {"index": "indexes", "process": "processes", "analysis": "analyses"}


def plural(count: int, word: str) -> str:
    """'1 run', '3 runs', '1,024 partitions'."""
    noun = word if count == 1 else IRREGULAR.get(word, word + "s")
    return f"{count:,} {noun}"


def format_duration(seconds: float) -> str:
    """'40 s', '1 minute', '12 minutes', '1 h 45 min'."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return plural(minutes, "minute")
    return f"{minutes // 60} h {minutes % 60} min"


def short_query(query: str, width: int = 70) -> str:
    """A statement on one line, cut to `width` characters."""
    one = " ".join(query.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def flat_query(query: str, width: int = 90) -> str:
    """A statement on one line, cut to `width`, safe in a Markdown table cell."""
    return short_query(query.replace("|", "\\|").replace("`", "'"), width)
