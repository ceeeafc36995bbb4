"""A user's connection string, read by libpq's own parser before anything else: its
secrets kept out of everything pgopt prints or writes, and off every command line.

`accept` is the door every DSN comes in by (an option, an ab.toml field): the
secrets a string holds are registered with the redactor first, from the text
itself (so a string libpq cannot read does not leak them in libpq's own error,
which quotes the string), then from libpq's reading of it (a percent-encoded
password, decoded). `for_client` hands a DSN to a client program (pg_dump,
pg_basebackup): the connection string on its command line without the password,
which goes in the program's environment (PGPASSWORD), where only pgopt's own
user can read it, not in `ps`.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ..errors import UsageError, first_line
from ..redact import redact_dsn, redactor

SECRET_KEYS = ("password", "sslpassword")
# key=value form: a quoted value (backslash escapes) or a bare one
_KEYWORD_SECRET = re.compile(r"\b(?:ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", re.I)
_QUERY_SECRET = re.compile(r"[?&](?:ssl)?password=([^&#]*)", re.I)
_URI = re.compile(r"^[a-z][a-z0-9+.-]*://([^/?#]*)", re.I)


def secrets_in(text: str) -> set[str]:
    """The secrets a connection string holds as written, read without libpq (which
    may refuse the string): the password of a URI's user info and of its query, a
    keyword's value; each as written and percent- or quote-decoded."""
    found: set[str] = set()
    uri = _URI.match(text)
    if uri is not None:
        userinfo, at, _host = uri.group(1).rpartition("@")
        if at and ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
        found.update(m.group(1) for m in _QUERY_SECRET.finditer(text))
    for m in _KEYWORD_SECRET.finditer(text):
        value = m.group(1)
        if value.startswith("'"):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found.add(value)
    return {s for raw in found for s in (raw, unquote(raw)) if s}


def accept(dsn: str, what: str) -> dict[str, Any]:
    """libpq's reading of `dsn`, given as `what` (`--dsn`, an ab.toml's `source_dsn`),
    its secrets registered first; a string libpq cannot read is one line (exit 2)
    that names neither the string nor its password."""
    for secret in secrets_in(dsn):
        redactor.add(secret)
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as e:
        reason = first_line(e).replace(f': "{dsn}"', "").replace(dsn, redact_dsn(dsn))
        raise UsageError(f"{what}: not a connection string libpq can read: {reason}") from None
    for key in SECRET_KEYS:
        value = params.get(key)
        redactor.add(str(value) if value else None)
    return params


def password_of(dsn: str) -> str | None:
    """The password a connection string carries, if any."""
    value = accept(dsn, "a connection string").get("password")
    return str(value) if value else None


def hide_passwords(*dsns: str | None) -> None:
    """Keep the secrets of each connection string out of all output from now on."""
    for dsn in dsns:
        if dsn:
            accept(dsn, "a connection string")


def for_client(dsn: str) -> tuple[str, dict[str, str]]:
    """`dsn` for a client program: the connection string for its command line,
    without the password, and the environment to run it in: pgopt's own without the
    caller's libpq variables (the DSN names the server), the password as PGPASSWORD."""
    params = accept(dsn, "a connection string")
    password = params.pop("password", None)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if password:
        env["PGPASSWORD"] = str(password)
    return make_conninfo(**params), env
