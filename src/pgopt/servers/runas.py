"""Run the server as an unprivileged user when pgopt itself runs as root.

initdb and postgres refuse root. As root, pgopt runs them as the system user
`pgopt` (`$PGOPT_SERVER_USER` names another), makes its work folder that user's,
and, when the binaries sit where that user cannot reach them (a venv under
/root), copies the installation to a shared folder.

The user is created on first use, by one pgopt at a time (a lock file):
concurrent `useradd`s each succeed and the last to write /etc/passwd wins, so
a pgopt started beside another on a fresh machine would run its server under a
uid that no longer exists.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..binaries import PgBinaries
from ..errors import TargetError

DEFAULT_USER = "pgopt"
SHARED_INSTALL_ROOT = Path("/var/lib/pgopt/pg")
USER_LOCK = Path("/run/lock/pgopt-server-user.lock")


@dataclass(frozen=True)
class ServerUser:
    name: str
    uid: int
    gid: int

    def popen_kwargs(self) -> dict[str, Any]:
        """Arguments that make subprocess run a program as this user."""
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def chown_tree(self, path: Path) -> None:
        os.chown(path, self.uid, self.gid)
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                os.chown(os.path.join(root, name), self.uid, self.gid, follow_symlinks=False)


def server_user() -> ServerUser | None:
    """The user to run the server as: None when pgopt is not root."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("PGOPT_SERVER_USER", DEFAULT_USER)
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        entry = _create_system_user(name)
    if entry.pw_uid == 0:
        raise TargetError(f"server user {name!r} is root; PostgreSQL refuses to run as root")
    return ServerUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


@contextlib.contextmanager
def _one_at_a_time() -> Iterator[None]:
    """Hold an exclusive lock shared by every pgopt on this machine."""
    lock = USER_LOCK if USER_LOCK.parent.is_dir() else Path("/tmp") / USER_LOCK.name
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _create_system_user(name: str) -> pwd.struct_passwd:
    with _one_at_a_time():
        try:
            return pwd.getpwnam(name)  # another pgopt made it while this one waited
        except KeyError:
            return _useradd(name)


def _useradd(name: str) -> pwd.struct_passwd:
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    result = subprocess.run(
        [
            useradd,
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            name,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise TargetError(
            f"running as root, and could not create the unprivileged user {name!r} "
            f"for the server: {result.stderr.strip() or 'useradd failed'}; "
            "set PGOPT_SERVER_USER to an existing user"
        ) from None


def can_enter(path: Path, user: ServerUser) -> bool:
    """Whether `user` may traverse every folder down to `path` (by permission bits)."""
    for folder in [path.resolve(), *path.resolve().parents]:
        st = folder.stat()
        if st.st_uid == user.uid:
            bit = stat.S_IXUSR
        elif st.st_gid == user.gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return False
    return True


def reachable_binaries(binaries: PgBinaries, user: ServerUser) -> PgBinaries:
    """Binaries `user` can run: these, or a shared copy of their installation."""
    if _runs_as(binaries.path("postgres"), user):
        return binaries
    install = binaries.bindir.parent
    digest = hashlib.sha256(str(install.resolve()).encode()).hexdigest()[:12]
    shared = SHARED_INSTALL_ROOT / f"{binaries.version}-{digest}"
    if not (shared / "bin" / "postgres").exists():
        SHARED_INSTALL_ROOT.mkdir(parents=True, exist_ok=True)
        tmp = shared.with_name(shared.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(install, tmp, symlinks=True)
        for root, dirs, files in os.walk(tmp):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for f in files:
                p = os.path.join(root, f)
                if not os.path.islink(p):
                    os.chmod(
                        p, os.stat(p).st_mode | 0o444 | (0o111 if os.access(p, os.X_OK) else 0)
                    )
        for folder in (SHARED_INSTALL_ROOT.parent, SHARED_INSTALL_ROOT):
            os.chmod(folder, 0o755)
        try:
            os.rename(tmp, shared)
        except OSError:  # another pgopt made it first
            shutil.rmtree(tmp, ignore_errors=True)
    copy = PgBinaries(
        shared / "bin", f"{binaries.source} (shared copy)", binaries.version, binaries.major
    )
    if not _runs_as(copy.path("postgres"), user):
        raise TargetError(f"user {user.name!r} cannot run {copy.path('postgres')}")
    return copy


def _runs_as(program: Path, user: ServerUser) -> bool:
    try:
        result = subprocess.run(
            [str(program), "--version"],
            capture_output=True,
            timeout=30,
            check=False,
            cwd="/",
            **user.popen_kwargs(),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0
