"""Integration fixtures: a real PostgreSQL started by pgopt's own target code."""

import contextlib
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgopt.binaries import CLIENT_PROGRAMS, SERVER_PROGRAMS, PgBinaries, find_binaries
from pgopt.servers.embedded import EmbeddedTarget

pytestmark = pytest.mark.integration

PG15_BIN = Path("/usr/lib/postgresql/15/bin")
LOCAL_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
# a test's source is no production server: its physical copy at full speed, after a
# fast checkpoint (a spread one waits up to 4.5 min for the dirty pages a test left)
FULL_SPEED = ("--copy-rate", "max", "--copy-checkpoint", "fast")


@pytest.fixture(scope="session")
def binaries() -> PgBinaries:
    return find_binaries(None, need=CLIENT_PROGRAMS + SERVER_PROGRAMS)


@contextlib.contextmanager
def work_folder() -> Iterator[Path]:
    """A work folder the unprivileged server user can enter (pytest's tmp_path is private)."""
    path = Path(tempfile.mkdtemp(prefix="pgopt-test-", dir="/var/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def workdir() -> Iterator[Path]:
    with work_folder() as path:
        yield path


@pytest.fixture(scope="session")
def server(binaries: PgBinaries) -> Iterator[EmbeddedTarget]:
    """One embedded server for the tests that only need one to talk to; each works in
    a database or objects of its own."""
    with EmbeddedTarget(binaries) as target:
        yield target


@contextlib.contextmanager
def small_filesystem(megabytes: int) -> Iterator[Path]:
    """A real filesystem of `megabytes` (tmpfs, mounted under /var/tmp and removed
    after), as a work folder the server user can enter; the test is skipped where
    this machine cannot mount one."""
    path = Path(tempfile.mkdtemp(prefix="pgopt-test-disk-", dir="/var/tmp"))
    options = f"size={megabytes}m,mode=0755"
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        path.rmdir()
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)
        path.rmdir()


def new_database(server: EmbeddedTarget, prefix: str) -> str:
    """A database of its own on `server`, named `prefix` and a random tail, with
    pg_stat_statements: a user's source for a replay; its DSN."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    dsn = admin.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create extension pg_stat_statements")
    return dsn


def local_server_answers() -> bool:
    try:
        with psycopg.connect(LOCAL_DSN, connect_timeout=2) as conn:
            conn.execute("select 1")
        return True
    except psycopg.Error:
        return False


def pgopt_processes(marker: str) -> list[str]:
    """Command lines of live processes mentioning `marker` (a work folder)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(cmdline)
    return found
