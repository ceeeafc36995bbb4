"""The connection-string options (`--dsn`, `--source-dsn`, `--standby-dsn`): each
value read by libpq's parser as the command line is read, before anything else, so
its password is kept out of every line pgopt prints from the first (servers/dsn.py);
and another service's URL (`--redis`), its password kept out likewise."""

from __future__ import annotations

from typing import Any

import click

from ..redact import redactor
from ..servers.dsn import accept, secrets_in


def read_dsn(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """The option's connection strings (one, or a repeated option's tuple) accepted."""
    name = param.opts[0] if param.opts else "a connection string"
    for text in value if isinstance(value, tuple) else (value,):
        if text is not None:
            accept(str(text), name)
    return value


def read_url(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A service's URL (redis://user:password@host): its password registered."""
    for secret in secrets_in(str(value)) if value else ():
        redactor.add(secret)
    return value


DSN: dict[str, Any] = {"callback": read_dsn, "metavar": "DSN"}
URL: dict[str, Any] = {"callback": read_url, "metavar": "URL"}
