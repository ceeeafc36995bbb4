"""A user's connection string, read by libpq's own parser: its password, kept out of
everything pgopt prints or writes from the moment the string is given."""

from __future__ import annotations

from psycopg.conninfo import conninfo_to_dict

from ..redact import redactor


def password_of(dsn: str) -> str | None:
    """The password a connection string carries, if any (to be redacted everywhere)."""
    try:
        value = conninfo_to_dict(dsn).get("password")
    except Exception:
        return None
    return str(value) if value else None


def hide_passwords(*dsns: str | None) -> None:
    """Keep the password of each connection string out of all output from now on."""
    for dsn in dsns:
        if dsn:
            redactor.add(password_of(dsn))
