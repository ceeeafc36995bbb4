"""The connection-string options (`--dsn`, `--source-dsn`, `--standby-dsn`): each
value read by libpq's parser as the command line is read, before anything else, so
its password is kept out of every line pgopt prints from the first (servers/dsn.py)."""

from __future__ import annotations

from typing import Any

import click

from ..servers.dsn import accept


def read_dsn(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """The option's connection strings (one, or a repeated option's tuple) accepted."""
    name = param.opts[0] if param.opts else "a connection string"
    for text in value if isinstance(value, tuple) else (value,):
        if text is not None:
            accept(str(text), name)
    return value


DSN: dict[str, Any] = {"callback": read_dsn, "metavar": "DSN"}
