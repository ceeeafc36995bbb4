"""A stop request (Ctrl-C, SIGTERM, SIGHUP) that outlives the exception it raises.

The signal handler raises in whatever the main thread runs; Python drops an
exception raised while it runs an object's finalizer ("Exception ignored in"),
so an interrupt can be lost there, and the run would go on. The request is also
kept here: pgbench is stopped by a thread that watches it, and the engine checks
it before every run, so a run stops however the exception fared.
"""

from __future__ import annotations

import threading

from .errors import Interrupted

REQUESTED = threading.Event()


def check() -> None:
    """Raise Interrupted when a stop was requested."""
    if REQUESTED.is_set():
        raise Interrupted("stop requested")
