"""A stop request (Ctrl-C, SIGTERM, SIGHUP) that outlives the exception it raises,
and one held back while a child process is started.

The signal handler raises in whatever the main thread runs; Python drops an
exception raised while it runs an object's finalizer ("Exception ignored in"),
so an interrupt can be lost there, and the run would go on. The request is also
kept here: pgbench is stopped by a thread that watches it, and the engine checks
it before every run, so a run stops however the exception fared.

A stop that lands inside `subprocess.Popen`, after the child started and before
Popen returned it, would leave a child no one holds to stop (a pgbouncer or a
postmaster outliving pgopt: seen once in a full suite on a loaded machine).
`held()` keeps such a stop waiting until the caller holds its child, then raises
it as it would have been.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from .errors import Interrupted

REQUESTED = threading.Event()
HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def check() -> None:
    """Raise Interrupted when a stop was requested."""
    if REQUESTED.is_set():
        raise Interrupted("stop requested")


@contextmanager
def held() -> Iterator[None]:
    """A stop signal that arrives inside the block is recorded, then raised again at
    its end as its own handler would have had it (in the main thread; elsewhere,
    where Python runs no handler, the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        caught.append(signum)  # its own handler, raised again below, says it was asked

    previous = {sig: signal.signal(sig, hold) for sig in HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if caught:
        signal.raise_signal(caught[0])
