"""Stopping child processes politely first, then firmly."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Sequence
from typing import Any

# pgbench and psql: SIGINT ends them; SIGKILL if they do not listen.
CLIENT_ESCALATION = ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0))


def stop(proc: subprocess.Popen[Any], escalation: Sequence[tuple[int, float]]) -> None:
    """Send each signal in turn until `proc` exits within that signal's wait."""
    for sig, wait in escalation:
        if proc.poll() is not None:
            return
        try:
            proc.send_signal(sig)
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return
