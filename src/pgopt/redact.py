"""Keep secrets out of everything pgopt prints or writes.

`redact_dsn` hides the password of one connection string; `Redactor` remembers
every secret seen during a run and scrubs any text before it leaves the process.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

MASK = "***"

_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_URL_QUERY_PASSWORD = re.compile(r"([?&]password=)([^&]*)", re.IGNORECASE)


def redact_dsn(dsn: str) -> str:
    """Return `dsn` with any password replaced by `***` (URL or key=value form)."""
    if "://" in dsn:
        try:
            parts = urlsplit(dsn)
        except ValueError:
            return _URL_QUERY_PASSWORD.sub(rf"\g<1>{MASK}", dsn)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostinfo = netloc.rpartition("@")
            if ":" in userinfo:
                user = userinfo.split(":", 1)[0]
                netloc = f"{user}:{MASK}@{hostinfo}"
        query = _URL_QUERY_PASSWORD.sub(rf"\g<1>{MASK}", "?" + parts.query)[1:]
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return _KEYWORD_PASSWORD.sub(rf"\g<1>{MASK}", dsn)


class Redactor:
    """Scrubs known secrets from text; one per process, fed as secrets appear."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()

    def add(self, secret: str | None) -> None:
        if secret:
            self._secrets.add(secret)

    def __call__(self, text: str) -> str:
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return _KEYWORD_PASSWORD.sub(rf"\g<1>{MASK}", text)


redactor = Redactor()
