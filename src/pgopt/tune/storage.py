"""The data disk measured, not asked: how long a WAL flush takes, and how random
and sequential reads compare, in a folder on the disk the server would use.

- WAL flush: pg_test_fsync (shipped with PostgreSQL) for one second; its first
  fdatasync figure, for one 8 kB write (it is stopped there).
- Reads: a 256 MiB file written once, then read with O_DIRECT (the page cache
  bypassed, as a cold read would be): random 8 kB reads at queue depth 1 and at 8
  (eight threads), and 128 kB sequential reads per 8 kB page (as the kernel's
  readahead serves a sequential scan), for `seconds` each. On a filesystem that
  refuses O_DIRECT (tmpfs) the reads are said to be from memory.
The folder and the file are removed afterwards. `parse_pg_test_fsync` is pure.
"""

from __future__ import annotations

import mmap
import os
import random
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from ..machine import filesystem_type
from .facts import Storage

PAGE = 8192
SEQ_CHUNK = 128 * 1024
PROBE_BYTES = 256 * 1024 * 1024
_FDATASYNC = re.compile(r"^\s*fdatasync\s+([\d.]+) ops/sec\s+(\d+) usecs/op", re.M)


def parse_pg_test_fsync(text: str) -> float | None:
    """The first fdatasync figure (one 8 kB write), in microseconds per flush."""
    m = _FDATASYNC.search(text)
    return float(m.group(2)) if m else None


def probe(base: Path, pg_test_fsync: Path | None, seconds: float = 1.0) -> Storage:
    folder = Path(tempfile.mkdtemp(prefix="pgopt-storage-", dir=base))
    try:
        fsync_us = _fsync(pg_test_fsync, folder) if pg_test_fsync else None
        path = folder / "probe"
        _write(path)
        direct = _opens_direct(path)
        fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
        try:
            qd1 = _random_reads(fd, seconds, threads=1)
            qd8 = _random_reads(fd, seconds, threads=8)
            seq = _sequential(fd, seconds)
        finally:
            os.close(fd)
        usage = shutil.disk_usage(folder)
        return Storage(
            folder=str(base),
            filesystem=filesystem_type(base),
            free_mb=usage.free // 2**20,
            fsync_us=fsync_us,
            read_us=seconds * 1e6 / max(qd1, 1),
            read_gain=qd8 / max(qd1, 1),
            seq_page_us=seconds * 1e6 / max(seq * (SEQ_CHUNK // PAGE), 1),
            direct=direct,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fsync(program: Path, folder: Path) -> float | None:
    """pg_test_fsync's first fdatasync figure, read as it prints it; the program is
    stopped there (its other tests, a dozen seconds more, are not used)."""
    try:
        proc = subprocess.Popen(
            [str(program), "-s", "1", "-f", str(folder / "fsync")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return None
    found = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            found = parse_pg_test_fsync(line)
            if found is not None:
                break
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return found


def _write(path: Path) -> None:
    chunk = os.urandom(1024 * 1024)
    with path.open("wb") as f:
        for _ in range(PROBE_BYTES // len(chunk)):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())


def _opens_direct(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return False
    try:
        buf = mmap.mmap(-1, PAGE)
        os.preadv(fd, [buf], 0)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _random_reads(fd: int, seconds: float, threads: int) -> int:
    """Random 8 kB reads done in `seconds` by `threads` readers together."""
    pages = PROBE_BYTES // PAGE
    counts = [0] * threads
    stop = time.monotonic() + seconds

    def reader(i: int) -> None:
        rng = random.Random(i)
        buf = mmap.mmap(-1, PAGE)  # page-aligned, as O_DIRECT needs
        while time.monotonic() < stop:
            os.preadv(fd, [buf], rng.randrange(pages) * PAGE)
            counts[i] += 1

    workers = [threading.Thread(target=reader, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(counts)


def _sequential(fd: int, seconds: float) -> int:
    """128 kB chunks read in order in `seconds` (from the start again at the end)."""
    buf = mmap.mmap(-1, SEQ_CHUNK)
    done, offset = 0, 0
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        os.preadv(fd, [buf], offset)
        offset = (offset + SEQ_CHUNK) % PROBE_BYTES
        done += 1
    return done
