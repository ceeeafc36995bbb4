"""Servers a pgopt left behind when it was killed outright (SIGKILL, the OOM
killer): found by their folder's owner file, stopped and removed by
the next pgopt that starts a server in the same work folder.

Every server pgopt starts (the embedded one, a standby, a shard) lives in a folder
`pgopt-*` holding `owner.pid`, the pid of the pgopt that made it; a pooler keeps
its pid file inside the same folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

OWNER_FILE = "owner.pid"
PREFIX = "pgopt-"


def reap_stale(base: Path) -> list[Path]:
    """Stop and remove servers whose pgopt process died without cleaning up."""
    reaped: list[Path] = []
    for root in base.glob(PREFIX + "*"):
        owner = root / OWNER_FILE
        try:
            pid = int(owner.read_text().strip())
        except (OSError, ValueError):
            continue
        if _alive(pid):
            continue
        # the pooler first (servers/pooler.py keeps its pid file there), then the server
        _kill_stale(root / "pgbouncer" / "pgbouncer.pid", b"pgbouncer", root, signal.SIGTERM)
        _kill_stale(root / "data" / "postmaster.pid", b"postgres", root, signal.SIGQUIT)
        shutil.rmtree(root, ignore_errors=True)
        reaped.append(root)
    return reaped


def _kill_stale(pidfile: Path, program: bytes, root: Path, sig: int) -> None:
    """Signal the process a pid file names, if it is `program` run from under `root`,
    and wait up to 5 s for it to go."""
    try:
        pid = int(pidfile.read_text().splitlines()[0])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        if program in cmdline and str(root).encode() in cmdline:
            os.kill(pid, sig)
        for _ in range(100):
            if not _alive(pid):
                break
            time.sleep(0.05)
    except (OSError, ValueError, IndexError):
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
