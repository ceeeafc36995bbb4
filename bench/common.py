"""Shared by the measurement scripts: a throwaway server and a pgopt run against it."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pgopt.stats import bootstrap_ratio
from pgopt.target.embedded import EmbeddedTarget


def server_dsn(server: EmbeddedTarget) -> str:
    """The server's unix socket, as plain pgbench uses it: TCP would cost pgopt's side
    alone (about 15% of select-only tps here)."""
    return f"postgresql:///postgres?host={server.socket_dir}&port={server.port}&user=postgres"


def pgopt_run(args: list[str]) -> dict[str, object]:
    """Run `pgopt lab run ...` in a subprocess; return its result.json."""
    out = Path(tempfile.mkdtemp(prefix="pgopt-bench-")) / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "pgopt", "lab", "run", *args, "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"pgopt failed:\n{proc.stderr}")
    result: dict[str, object] = json.loads((out / "result.json").read_text())
    return result


def report(name_a: str, a: list[float], name_b: str, b: list[float]) -> None:
    ratio = bootstrap_ratio(a, b, seed=1)
    print(f"{name_a}: {[round(x) for x in a]} median {statistics.median(a):.0f}")
    print(f"{name_b}: {[round(x) for x in b]} median {statistics.median(b):.0f}")
    print(f"{name_a}/{name_b}: {ratio.median:.4f} [95% {ratio.low:.4f}-{ratio.high:.4f}]")
