"""The facts of the embedded server read from its binaries, without starting it (for
a dry run)."""

from __future__ import annotations

import subprocess

from ..binaries import PgBinaries
from ..errors import BinariesError
from .facts import ServerFacts


def embedded_facts(binaries: PgBinaries) -> ServerFacts:
    """The facts of the server pgopt would start from `binaries`: its version, and the
    context of every setting from `postgres --describe-config` (no server started)."""
    try:
        proc = subprocess.run(
            [str(binaries.path("postgres")), "--describe-config"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise BinariesError(f"cannot ask postgres for its settings: {e}") from e
    contexts = {}
    for line in proc.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) > 1:
            contexts[parts[0]] = parts[1]
    return ServerFacts(
        kind="embedded",
        version_num=binaries.major * 10000,
        pgbench_major=binaries.major,
        contexts=contexts,
    )
