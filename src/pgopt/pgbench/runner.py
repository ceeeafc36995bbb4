"""Run pgbench as a child process, stream its `-P` progress, and parse the result.

A run that pgbench aborted, or that exited with an error, raises BenchError
with pgbench's own message: a partial result is never returned as valid.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import threading
import time
from array import array
from collections.abc import Callable
from pathlib import Path

from ..errors import BenchError, BinariesError
from ..model.pgbench_run import PgbenchResult
from ..processes import CLIENT_ESCALATION, stop
from ..redact import redactor
from .command import PgbenchSpec, build_args
from .parse import (
    ProgressSample,
    abort_message,
    parse_log_latencies,
    parse_progress_line,
    parse_summary,
)

ProgressCallback = Callable[[ProgressSample], None]


def run_pgbench(
    pgbench: Path,
    spec: PgbenchSpec,
    env: dict[str, str],
    *,
    cwd: Path,
    on_progress: ProgressCallback | None = None,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    warmup_s: int = 0,
) -> PgbenchResult:
    """Run pgbench to completion; `cancel`, when set from another thread, stops it.
    Latencies logged in the first `warmup_s` seconds are left out."""
    args = build_args(pgbench, spec)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    own_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    started_epoch = time.time()
    try:
        proc = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            text=True,
            bufsize=1,
        )
    except OSError as e:
        raise BinariesError(f"cannot run pgbench: {e}") from e

    stdout_parts: list[str] = []
    reader = threading.Thread(
        target=lambda: stdout_parts.append(proc.stdout.read()),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    stderr_lines: list[str] = []
    progress: list[ProgressSample] = []
    timer = _kill_after(proc, timeout_s) if timeout_s else None
    if cancel is not None:
        threading.Thread(target=_stop_when_set, args=(cancel, proc), daemon=True).start()
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            stderr_lines.append(line)
            sample = parse_progress_line(line)
            if sample is not None:
                progress.append(sample)
                if on_progress is not None:
                    on_progress(sample)
        proc.wait()
        reader.join()
    except BaseException:
        stop(proc, CLIENT_ESCALATION)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    own = (own_after.ru_utime - own_before.ru_utime) + (own_after.ru_stime - own_before.ru_stime)

    stdout = "".join(stdout_parts)
    stderr = "".join(stderr_lines)
    latencies = _collect_latencies(spec.log_prefix, int((started_epoch + warmup_s) * 1e6))
    aborted = abort_message(stderr_lines)
    if proc.returncode != 0 or aborted:
        reason = aborted or _tail(stderr) or f"exit code {proc.returncode}"
        if proc.returncode == -signal.SIGKILL and timeout_s:
            reason = f"pgbench ran past its time limit of {timeout_s:.0f}s and was stopped"
        raise BenchError(redactor(f"pgbench failed: {reason}"))
    summary = parse_summary(stdout)
    return PgbenchResult(
        tuple(args),
        summary,
        tuple(progress),
        latencies,
        stdout,
        stderr,
        wall,
        cpu,
        own,
    )


def _collect_latencies(prefix: Path | None, since_epoch_us: int) -> array[int]:
    values: array[int] = array("q")
    if prefix is None:
        return values
    for log in sorted(prefix.parent.glob(prefix.name + ".*")):
        with open(log) as f:
            values.extend(parse_log_latencies(f, since_epoch_us))
        log.unlink()
    return values


def _tail(text: str, lines: int = 3) -> str:
    kept = [ln for ln in text.strip().splitlines() if not ln.startswith("progress:")]
    return " | ".join(kept[-lines:])


def _stop_when_set(cancel: threading.Event, proc: subprocess.Popen[str]) -> None:
    while proc.poll() is None:
        if cancel.wait(0.5):
            stop(proc, CLIENT_ESCALATION)
            return


def _kill_after(proc: subprocess.Popen[str], seconds: float) -> threading.Timer:
    def kill_if_running() -> None:
        if proc.poll() is None:
            proc.kill()

    timer = threading.Timer(seconds, kill_if_running)
    timer.daemon = True
    timer.start()
    return timer
