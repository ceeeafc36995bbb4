"""The unprivileged server user, created by pgopts started together on a fresh machine."""

import os
import pwd
import subprocess
import sys
import uuid

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only root creates the server user")

# each says it is ready, then waits for its line on stdin: all are asked at once
CREATE = (
    "import sys; from pgopt.servers.runas import server_user; "
    "print('ready', flush=True); sys.stdin.readline(); print(server_user().uid)"
)


def test_pgopts_started_together_agree_on_one_user_that_exists() -> None:
    """Six concurrent first uses: one user, and every pgopt holds its uid.

    Unlocked, concurrent `useradd`s each succeeded and each wrote its own uid; the
    suite's first workers ran initdb as a uid /etc/passwd no longer had.
    """
    name = f"pgopt-t{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "PGOPT_SERVER_USER": name}
    try:
        starts = [
            subprocess.Popen(
                [sys.executable, "-c", CREATE],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(6)
        ]
        for start in starts:
            assert start.stdout is not None
            assert start.stdout.readline() == "ready\n"
        for start in starts:
            assert start.stdin is not None
            start.stdin.write("go\n")
            start.stdin.flush()
        uids = {int(p.communicate(timeout=60)[0]) for p in starts}
        assert all(p.returncode == 0 for p in starts)
        assert uids == {pwd.getpwnam(name).pw_uid}
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)
