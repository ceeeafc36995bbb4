"""Server SQL kept as .sql files beside this module, read by name and server version.

`NAME.sql` serves every supported version; `NAME_post_NNNNNN.sql` serves servers
from version NNNNNN on (the pg_activity convention): the newest variant not newer
than the server is chosen, and a name with no variant for the server is None
(the statistic does not exist there). `own_fingerprints` tells pgopt's own reads
from a server's other statements in its pg_stat_statements.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

from pglast import split
from pglast.parser import ParseError, fingerprint

_VARIANT = re.compile(r"^(?P<name>.+?)(?:_post_(?P<version>\d{6}))?\.sql$")


@cache
def _variants(name: str) -> tuple[tuple[int, str], ...]:
    found = []
    for entry in files(__package__).iterdir():
        m = _VARIANT.match(entry.name)
        if m and m.group("name") == name:
            found.append((int(m.group("version") or 0), entry.read_text()))
    return tuple(sorted(found))


def find(name: str, server_version: int = 0) -> str | None:
    """The text of the newest variant of `name` for `server_version` (e.g. 180006), or
    None when the server is older than every variant."""
    fitting = [text for since, text in _variants(name) if since <= server_version]
    return fitting[-1] if fitting else None


def load(name: str, server_version: int = 0) -> str:
    """Like `find`, for queries every supported server has."""
    text = find(name, server_version or 10**6)
    if text is None:
        raise LookupError(f"no query {name!r} for server version {server_version}")
    return text


_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%s")


@cache
def own_fingerprints() -> frozenset[str]:
    """PostgreSQL's fingerprint (through pglast: constants and parameters left out) of
    every statement of pgopt's own queries, with psycopg's placeholders as `$1`: a
    server's pg_stat_statements row with one of them is pgopt reading it (a watch of
    the source reads pg_stat_activity twice a second, and a hundred times a second for
    the calls sent with literals), not its clients' work."""
    out: set[str] = set()
    for entry in files(__package__).iterdir():
        if not entry.name.endswith(".sql"):
            continue
        text = _PLACEHOLDER.sub("$1", entry.read_text()).replace("%%", "%")
        try:
            out.update(fingerprint(statement) for statement in split(text))
        except ParseError:
            continue
    return frozenset(out)


def is_own(query: str) -> bool:
    """Whether `query` (as pg_stat_statements keeps it) is one of pgopt's own."""
    try:
        return fingerprint(query) in own_fingerprints()
    except ParseError:
        return False
