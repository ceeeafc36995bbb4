"""A password given in a DSN never leaves pgopt: on a source that asks for it (SCRAM),
`ab` copies it physically (pg_basebackup) and logically (pg_dump), and `advise`'s
missing-index rule copies its tables (pg_dump), each reaching the server with the
password, and the password shows in no line pgopt prints, no file it writes, and no
command line of any process on the machine while they run (what any local user sees
in `ps`)."""

from __future__ import annotations

import os
import secrets
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget

from .conftest import FULL_SPEED, new_database

pytestmark = pytest.mark.xdist_group("secrets")

PASSWORD = f"Pw-{secrets.token_hex(6)}"
SCHEMA = """\
create table orders (id int primary key, customer int not null, note text not null);
insert into orders select i, i % 300, 'n' || i from generate_series(1, 20000) i;
analyze;
"""
WORKLOAD = "\\set c random(0, 299)\nselect count(*) from orders where customer = :c;\n"


class CommandLines:
    """Every process's command line seen while it watches (/proc/*/cmdline)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> CommandLines:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as f:
                            self.seen.add(f.read().replace(b"\0", b" ").decode(errors="replace"))
                    except OSError:
                        continue


@pytest.fixture(scope="module")
def source(binaries: PgBinaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A source whose role `app` must give its password over TCP, replication too."""
    folder = tmp_path_factory.mktemp("secrets")
    with EmbeddedTarget(binaries) as server:
        dsn = new_database(server, "secrets")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(SCHEMA)
            conn.execute(f"create role app login superuser password '{PASSWORD}'")
            conn.execute("select pg_stat_statements_reset()")
        hba = server.data_dir / "pg_hba.conf"
        rules = "host all app 127.0.0.1/32 scram-sha-256\n"
        rules += "host replication app 127.0.0.1/32 scram-sha-256\n"
        hba.write_text(rules + hba.read_text())
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("select pg_reload_conf()")
        (folder / "w.sql").write_text(WORKLOAD)
        pgbench = [str(binaries.path("pgbench")), "-n", "-c", "2", "-t", "400"]
        subprocess.run(
            [*pgbench, "-f", str(folder / "w.sql"), dsn], check=True, capture_output=True
        )
        host, name = dsn.split("@", 1)[1].split("/", 1)
        app = f"postgresql://app:{PASSWORD}@{host}/{name}"
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(app.replace(PASSWORD, "wrong")).close()  # the password is asked
        yield app


def _nowhere(capsys: pytest.CaptureFixture[str], lines: CommandLines, *folders: Path) -> None:
    captured = capsys.readouterr()
    assert PASSWORD not in captured.out + captured.err
    assert [c for c in lines.seen if PASSWORD in c] == []
    assert any("pg_basebackup" in c or "pg_dump" in c for c in lines.seen)  # they were seen
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file():
                assert PASSWORD.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("copy", ["physical", "logical"])
def test_ab_copies_with_the_password_and_shows_it_nowhere(
    source: str, workdir: Path, tmp_path: Path, copy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    args = ["ab", "--source-dsn", source, "--synthesize", "--source-sample", "0", "--copy", copy]
    args += ["--b-setting", "work_mem=8MB"]
    args += ["--reps", "1", "--duration", "1", "--warmup", "0", "--clients", "2", *FULL_SPEED]
    with CommandLines() as lines:
        assert main([*args, "--workdir", str(workdir), "--out", str(out)]) == 0
    _nowhere(capsys, lines, out, workdir)


def test_advise_copies_with_the_password_and_shows_it_nowhere(
    source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "advise"
    args = ["advise", "--dsn", source, "--rule", "missing-index", "--sample", "1"]
    with CommandLines() as lines:
        assert main([*args, "--cover", "100", "--out", str(out)]) == 0
    _nowhere(capsys, lines, out)
    assert "customer" in (out / "indexes.sql").read_text()  # the copy was made and planned
