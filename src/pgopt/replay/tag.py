"""The replay's tag, `/* pgopt q01 */`: written into each replayed statement after its
first word, read back from the replay's pg_stat_statements rows (pure).

After the first word because pgbench drops a statement's leading comments, and
pg_stat_statements keeps the rest of the text as the first call sent it; so a
replayed statement's row is found again by its tag (the fidelity check, an index
proof's per-statement effects, the observer keeping every tagged row)."""

from __future__ import annotations

import re

TAG = re.compile(r"/\* pgopt (\w+) \*/ ")


def tagged(name: str, statement: str) -> str:
    """`statement` with the tag `name` after its first word."""
    first, _, rest = statement.partition(" ")
    return f"{first} /* pgopt {name} */ {rest}"


def tag_of(query: str) -> str | None:
    """The replay's tag of a statement, None when the replay did not send it (pgopt's
    sampler, the user's own scripts)."""
    found = TAG.search(query)
    return found.group(1) if found else None


def untagged(query: str) -> str:
    """The statement as the source sent it, its tag taken out."""
    return TAG.sub("", query)
