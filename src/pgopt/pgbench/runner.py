"""Run pgbench as a child process, and parse its report and its transaction log.

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
from collections.abc import Iterator
from pathlib import Path

from .. import stopping
from ..errors import BenchError, BinariesError
from ..processes import CLIENT_ESCALATION, stop
from ..redact import redactor
from .command import PgbenchSpec, build_args
from .parse import abort_message, parse_summary
from .record import PgbenchResult
from .transaction_log import TransactionLog, read_transaction_log


def run_pgbench(
    pgbench: Path,
    spec: PgbenchSpec,
    env: dict[str, str],
    *,
    cwd: Path,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
) -> PgbenchResult:
    """Run pgbench to completion; `cancel`, when set from another thread, stops it.
    With a log, every whole second of the run is in its per-second series."""
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
        )
    except OSError as e:
        raise BinariesError(f"cannot run pgbench: {e}") from e

    timer = _kill_after(proc, timeout_s) if timeout_s else None
    threading.Thread(target=_stop_when_set, args=(cancel, proc), daemon=True).start()
    try:
        stdout, stderr = proc.communicate()
    except BaseException:
        stop(proc, CLIENT_ESCALATION)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    stopping.check()  # an interrupt whose exception was lost: pgbench was stopped
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    own = (own_after.ru_utime - own_before.ru_utime) + (own_after.ru_stime - own_before.ru_stime)

    log = _read_log(spec, started_epoch, wall)
    aborted = abort_message(stderr.splitlines())
    if proc.returncode != 0 or aborted:
        reason = aborted or _tail(stderr) or f"exit code {proc.returncode}"
        if proc.returncode == -signal.SIGKILL and timeout_s:
            reason = f"pgbench ran past its time limit of {timeout_s:.0f}s and was stopped"
        raise BenchError(redactor(f"pgbench failed: {reason}"))
    summary = parse_summary(stdout)
    return PgbenchResult(
        tuple(args),
        summary,
        log,
        stdout,
        stderr,
        wall,
        cpu,
        own,
    )


def _read_log(spec: PgbenchSpec, started_epoch: float, wall_s: float) -> TransactionLog:
    """Read the run's `-l` files (one per thread), then remove them; a run without a
    log has no latencies and no seconds."""
    prefix = spec.log_prefix
    if prefix is None:
        return TransactionLog(array("q"), (), spec.log_sampling_rate)
    files = sorted(prefix.parent.glob(prefix.name + ".*"))
    log = read_transaction_log(
        _lines_of(files),
        started_us=int(started_epoch * 1e6),
        whole_seconds=spec.duration_s if spec.duration_s is not None else int(wall_s),
        sampling_rate=spec.log_sampling_rate,
    )
    for path in files:
        path.unlink()
    return log


def _lines_of(files: list[Path]) -> Iterator[str]:
    for path in files:
        with open(path) as f:
            yield from f


def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def _stop_when_set(cancel: threading.Event | None, proc: subprocess.Popen[str]) -> None:
    """Stop pgbench when `cancel` is set, or a stop was requested (stopping.py)."""
    while proc.poll() is None:
        if stopping.REQUESTED.wait(0.25) or (cancel is not None and cancel.is_set()):
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
