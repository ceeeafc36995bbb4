"""Server SQL kept as .sql files beside this module, read by name and server version.

`NAME.sql` serves every supported version; `NAME_post_NNNNNN.sql` serves servers
from version NNNNNN on (the pg_activity convention): the newest variant not newer
than the server is chosen, and a name with no variant for the server is None
(the statistic does not exist there).
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

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
