"""A session a stop request may interrupt mid-query (Ctrl-C, SIGTERM).

psycopg cancels the query under way on Ctrl-C only; a SIGTERM (pgopt's
Interrupted) leaves the connection busy, and any statement sent on it then fails
with "another command is already in progress", which would replace the
interrupt. So a session left by an exception is never reused: the query still
under way is cancelled on the server (a live server keeps no query of pgopt's
running), and the connection is closed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg import pq

CANCEL_TIMEOUT_S = 5.0


@contextlib.contextmanager
def closed_on_error(conn: psycopg.Connection[Any]) -> Iterator[psycopg.Connection[Any]]:
    """`conn`, cancelled if busy and closed when the block ends by an exception."""
    try:
        yield conn
    except BaseException:
        if not conn.closed and conn.pgconn.transaction_status == pq.TransactionStatus.ACTIVE:
            with contextlib.suppress(Exception):
                conn.cancel_safe(timeout=CANCEL_TIMEOUT_S)
        conn.close()
        raise
