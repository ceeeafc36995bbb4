"""A read-only session on a user's server: the one way pgopt reads someone's database
(`ab`'s source and its sampled copy, `advise`, the index advisor, `tune --dsn`), with
one set of limits, each a libpq option of the session:

- `default_transaction_read_only = on`: nothing the session runs can write to a
  database (a capture of the source's log, `--source-capture`, is the one caller
  that changes settings: its log settings, with ALTER SYSTEM, put back after);
- `statement_timeout` 60 s: no query of pgopt's runs long on a production server (a
  sampled copy, which reads whole tables, lifts it: `copying=True`);
- `lock_timeout` 5 s: it never waits long behind a lock, nor makes others queue
  behind its own wait;
- `application_name` `pgopt COMMAND`: whoever looks at pg_stat_activity sees whose it is;
- `connect_timeout` 10 s.

The user's own `options` (`-c search_path=app`) are kept, pgopt's appended after
them (of two `-c` of one setting, the later holds): `with_options` is how any
session of pgopt's on a user's server adds its own (the wait sampler's too).

And its row helper: a query's rows as dicts.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from .dsn import accept

STATEMENT_TIMEOUT = "60s"
LOCK_TIMEOUT = "5s"
CONNECT_TIMEOUT_S = 10


READ_ONLY = "-c default_transaction_read_only=on"


def with_options(params: dict[str, Any], options: str) -> dict[str, Any]:
    """`params` with `options` added after the ones they carry (the user's own kept)."""
    given = str(params.get("options") or "").strip()
    return {**params, "options": f"{given} {options}".strip()}


def session_params(dsn: str, command: str, *, copying: bool = False) -> dict[str, Any]:
    """The connection parameters of `command`'s read-only session on `dsn` (a
    UsageError, exit 2, for a DSN libpq cannot read)."""
    timeout = "0" if copying else STATEMENT_TIMEOUT
    options = f"{READ_ONLY} -c statement_timeout={timeout} -c lock_timeout={LOCK_TIMEOUT}"
    params = with_options(accept(dsn, "the connection string"), options)
    return {**params, "application_name": f"pgopt {command}"}


def connect(
    dsn: str, command: str, *, autocommit: bool = True, copying: bool = False
) -> psycopg.Connection[Any]:
    """`command`'s read-only session on `dsn` (psycopg.Error when it cannot connect)."""
    params = session_params(dsn, command, copying=copying)
    return psycopg.connect(**params, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S)


def dict_rows(
    conn: psycopg.Connection[Any], query: Any, params: Any = None
) -> list[dict[str, Any]]:
    """`query`'s rows as dicts (with `params` None, a `%` in it is sent as it is; with
    params, even `{}`, `%%` reads as `%`)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(query, params).fetchall()
