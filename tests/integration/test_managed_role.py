"""Every command that reads a user's server, run as the role a managed server (RDS,
Cloud SQL, Azure) gives a DBA: LOGIN with a password, pg_monitor and
pg_read_all_data, no SUPERUSER, REPLICATION, CREATEDB or CREATEROLE. What it may do
works; what it may not is one line, exit 2, naming what it lacks and what would
give it; what was left out, and why, is said. Never a traceback, never an internal
error, never the password (docs/managed.md)."""

import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.base import LAB_COMMENT
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document

from .conftest import LOCAL_DSN, local_server_answers, new_database

pytestmark = pytest.mark.xdist_group("managed-role")

SCHEMA = """\
create table orders (id bigint generated always as identity primary key,
                     customer_id int not null, status text not null);
insert into orders (customer_id, status)
select (random() * 5000)::int, (array['new', 'paid', 'shipped'])[1 + i % 3]
from generate_series(1, 40000) i;
create table notes (id int primary key, body text);
insert into notes select i, 'note ' || i from generate_series(1, 2000) i;
create extension pgstattuple;
analyze;
"""
# orders has no index on customer_id: advise's missing-index has one to find
WORKLOAD = "\\set c random(1, 5000)\nselect count(*) from orders where customer_id = :c;\n"
ROLE = (
    "create role monitor login password '{password}' nosuperuser noreplication nocreatedb "
    "nocreaterole in role pg_monitor, pg_read_all_data"
)
# the role logs in with its password (as on a provider's server), here and for replication
HBA = (
    "host all monitor 127.0.0.1/32 scram-sha-256\n"
    "host replication monitor 127.0.0.1/32 scram-sha-256\n"
)
SHORT = ["--duration", "1", "--reps", "1", "--warmup", "0"]


@dataclass(frozen=True)
class Managed:
    server: EmbeddedTarget
    admin: str  # the source database, as its superuser
    dsn: str  # the same, as the monitor role, with its password
    password: str
    workload: Path


@pytest.fixture(scope="module")
def managed(binaries: PgBinaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Managed]:
    """A source database whose pg_stat_statements saw a known workload, and the
    monitor role; the server holds no pgopt_lab, as a user's server would not."""
    folder = tmp_path_factory.mktemp("managed")
    with EmbeddedTarget(binaries) as server:
        admin = new_database(server, "shop")
        password = f"pw-{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(SCHEMA)
            conn.execute(ROLE.format(password=password))
            conn.execute("drop database pgopt_lab")
            conn.execute("select pg_stat_statements_reset(), pg_stat_reset()")
        hba = server.data_dir / "pg_hba.conf"
        hba.write_text(HBA + hba.read_text())
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("select pg_reload_conf()")
        workload = folder / "by_customer.sql"
        workload.write_text(WORKLOAD)
        pgbench = [str(binaries.path("pgbench")), "-n", "-c", "2", "-f", str(workload)]
        subprocess.run([*pgbench, "-t", "300", admin], check=True, capture_output=True)
        dsn = admin.replace("postgres@", f"monitor:{password}@")
        yield Managed(server, admin, dsn, password, workload)


@pytest.fixture
def createdb(managed: Managed) -> Iterator[None]:
    """The monitor role with CREATEDB, as a provider's admin role may grant it."""
    with psycopg.connect(managed.admin, autocommit=True) as conn:
        conn.execute("alter role monitor createdb")
    try:
        yield
    finally:
        with psycopg.connect(managed.admin, autocommit=True) as conn:
            conn.execute("alter role monitor nocreatedb")


@pytest.fixture
def live(managed: Managed, binaries: PgBinaries) -> Iterator[None]:
    """The application running while a command watches the source."""
    args = [str(binaries.path("pgbench")), "-n", "-c", "1", "-T", "60", "-R", "200"]
    proc = subprocess.Popen(
        [*args, "-f", str(managed.workload), managed.admin],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run(
    capsys: pytest.CaptureFixture[str], password: str | None, *args: str
) -> tuple[int, str, str]:
    """pgopt's command line as a user runs it: its exit code, stdout and stderr, none
    holding a traceback, an internal error or the role's password."""
    code = main(list(args))
    out, err = capsys.readouterr()
    for text in (out, err):
        assert "Traceback" not in text and "internal error" not in text, text[-2000:]
        assert password is None or password not in text
    return code, out, err


def one_line(err: str) -> str:
    """The error: one line, stderr's last (progress and notes may come before it)."""
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line]
    assert errors == lines[-1:], lines
    assert errors[0].startswith("pgopt: error: ")
    return errors[0]


def no_password_in(folder: Path, password: str) -> None:
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in {".json", ".md", ".html", ".sql", ".toml", ".conf"}:
            assert password not in path.read_text(errors="replace"), path


def lab_databases(managed: Managed) -> list[str]:
    with psycopg.connect(managed.admin) as conn:
        rows = conn.execute("select datname from pg_database where datname like 'pgopt%'")
        return [str(r[0]) for r in rows]


def test_advise_checks_every_rule_and_proves_an_index_on_a_copy(
    managed: Managed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pg_monitor reads the statistics and pgstattuple, pg_read_all_data every column's
    pg_stats and the rows pg_dump copies into pgopt's own server for missing-index;
    its proof replays the workload on a copy: nothing of it needs more."""
    out = tmp_path / "advise"
    args = ["advise", "--dsn", managed.dsn, "--sample", "1", "--out", str(out)]
    args += ["--prove", "missing-index", "--prove-duration", "1", "--prove-reps", "3"]
    code, text, _ = run(capsys, managed.password, *args)
    assert code == 0
    doc = json.loads((out / "advice.json").read_text())
    # no rule left unchecked as this role
    assert doc["not_checked"] == [], doc["not_checked"]
    (index,) = [f for f in doc["findings"] if f["rule"] == "missing-index"]
    assert index["message"].startswith("public.orders (customer_id)")
    assert index["proof"].startswith(
        ("proven faster (×", "no measurable effect (×", "slower (×", "not proven: ")
    ), index["proof"]
    assert "missing-index" in text and "monitor:***@" in text
    no_password_in(out, managed.password)


def test_ab_synthesizes_and_copies_logically_saying_why(
    managed: Managed, live: None, tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No REPLICATION: the physical copy cannot be made, and the logical one is said
    with the reason; the watch sees the other sessions' calls (pg_read_all_stats)."""
    out = tmp_path / "ab"
    args = ["ab", "--source-dsn", managed.dsn, "--synthesize", "--source-sample", "1"]
    args += [*SHORT, "--workdir", str(workdir), "--out", str(out)]
    code, _, err = run(capsys, managed.password, *args, "--b-setting", "synchronous_commit=off")
    assert code == 0
    assert (
        "pgopt: a logical copy: the source's role has neither REPLICATION nor SUPERUSER "
        "(pg_basebackup needs one)" in err
    )
    readme = (out / "workload" / "README.md").read_text()
    assert "from the 1-s watch" in readme
    assert "the watch's look at the calls its clients sent" in readme
    assert load_document(out)["fidelity"]["statements"]
    no_password_in(out, managed.password)


def test_ab_copy_physical_and_source_capture_are_refused_in_one_line(
    managed: Managed, tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["ab", "--source-dsn", managed.dsn, "--synthesize", "--source-sample", "0"]
    base += [*SHORT, "--workdir", str(workdir)]
    code, _, err = run(
        capsys, managed.password, *base, "--copy", "physical", "--out", str(tmp_path / "p")
    )
    assert code == 2
    line = one_line(err)
    assert "--copy physical: the source's role has neither REPLICATION nor SUPERUSER" in line
    assert err.strip() == line  # refused before the source is read and synthesized
    code, _, err = run(
        capsys, managed.password, *base, "--source-capture", "1", "--out", str(tmp_path / "c")
    )
    assert code == 2
    line = one_line(err)
    assert "role monitor is not a superuser" in line and "--source-log" in line


def test_ab_copies_a_sample_of_the_rows(
    managed: Managed, tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sample"
    args = ["ab", "--source-dsn", managed.dsn, "--sample", "10", "--script", str(managed.workload)]
    args += [*SHORT, "--workdir", str(workdir), "--out", str(out)]
    code, _, err = run(capsys, managed.password, *args)
    assert code == 0
    assert "pgopt: a logical copy: --sample copies part of the rows" in err
    assert "pgopt: sampled public.orders" in err


def test_tune_reads_the_server_and_says_its_script_needs_more(
    managed: Managed, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["tune", "--dsn", managed.dsn, "--storage", "ssd"]
    code, out, _ = run(capsys, managed.password, *args)
    assert code == 0 and "\nwork_mem = '" in out
    code, out, err = run(capsys, managed.password, *args, "--format", "sql")
    assert code == 0 and "ALTER SYSTEM SET work_mem = " in out
    assert "-- run as a superuser: ALTER SYSTEM needs one" in out
    assert "parameter group" in out
    (note,) = [line for line in err.splitlines() if "note:" in line]
    assert note.startswith("[tune] note: the script is not for the role of --dsn: role monitor")
    assert "GRANT ALTER SYSTEM ON PARAMETER" in note and "work_mem" in note


@pytest.mark.parametrize(
    "command",
    [
        ["tune", "--measure", "--storage", "ssd", "--quick", "--no-ablation"],
        ["lab", "run", "smoke"],
    ],
    ids=["tune-measure", "lab-run"],
)
def test_without_createdb_a_run_on_the_server_is_one_line(
    managed: Managed, command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*command, "--dsn", managed.dsn, "--allow-settings", *SHORT, "--out", str(tmp_path)]
    code, _, err = run(capsys, managed.password, *args)
    assert code == 2
    line = one_line(err)
    assert "cannot create database pgopt_lab" in line
    assert "role monitor has no CREATEDB (ALTER ROLE monitor CREATEDB" in line
    assert lab_databases(managed) == []


USER_LAB = """
title = "managed"
[dataset]
setup = ["setup.sql"]
[run]
clients = 1
[[steps]]
name = "baseline"
scripts = ["bench.sql"]
[[steps]]
name = "async"
settings = { synchronous_commit = "off" }
[[steps]]
name = "bgwriter"
settings = { bgwriter_delay = "60ms" }
"""


def user_lab(folder: Path) -> Path:
    folder.mkdir()
    (folder / "lab.toml").write_text(USER_LAB)
    (folder / "setup.sql").write_text("create table t (id bigint);\n")
    (folder / "bench.sql").write_text("insert into t values (1);\n")
    return folder


def test_with_createdb_session_settings_run_and_server_wide_ones_are_left_out(
    managed: Managed, createdb: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pgopt_lab is the role's: a session setting is set on it, a server-wide one needs
    ALTER SYSTEM, which the role may not run: its step is skipped, and tune --measure
    leaves such settings out of the profiles, each time with what would allow it."""
    lab = user_lab(tmp_path / "lab")
    args = ["lab", "run", str(lab), "--dsn", managed.dsn, "--allow-settings", *SHORT]
    code, _, err = run(capsys, managed.password, *args, "--out", str(tmp_path / "lab-run"))
    assert code == 0
    result = load_document(tmp_path / "lab-run")
    (skipped,) = result["skipped"]
    assert skipped["name"] == "bgwriter"
    assert {s["name"] for s in result["steps"]} == {"baseline", "async"}
    why = skipped["reason"]
    assert why.startswith("role monitor may not set bgwriter_delay server-wide (ALTER SYSTEM)")
    assert "GRANT ALTER SYSTEM ON PARAMETER bgwriter_delay TO monitor" in why
    assert "no CHECKPOINT before each run (permission denied" in err
    assert lab_databases(managed) == []

    args = ["tune", "--measure", "--dsn", managed.dsn, "--allow-settings", "--storage", "ssd"]
    args += ["--quick", "--no-ablation", *SHORT, "--out", str(tmp_path / "tune")]
    code, _, err = run(capsys, managed.password, *args)
    assert code == 0
    left_out = [line for line in err.splitlines() if "left out on --dsn: role" in line]
    assert len(left_out) == 2, err  # pgtune's profile and pgopt's
    assert all("server-wide (ALTER SYSTEM)" in line for line in left_out)
    assert "max_wal_size" in left_out[0]
    assert lab_databases(managed) == []


GRANTS = (
    "grant alter system on parameter bgwriter_delay to monitor",
    "grant execute on function pg_reload_conf() to monitor",
    "grant execute on function pg_show_all_file_settings() to monitor",
)


def test_granted_alter_system_on_a_setting_the_role_sets_it_and_puts_it_back(
    managed: Managed, createdb: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PostgreSQL 15's grants, what the skip above asked for: the step runs, and its
    setting is put back as postgresql.auto.conf had it (none)."""
    with psycopg.connect(managed.admin, autocommit=True) as conn:
        for grant in GRANTS:
            conn.execute(grant)
    try:
        lab = user_lab(tmp_path / "lab")
        args = ["lab", "run", str(lab), "--dsn", managed.dsn, "--allow-settings", *SHORT]
        code, _, err = run(capsys, managed.password, *args, "--out", str(tmp_path / "run"))
        assert code == 0, err
        result = load_document(tmp_path / "run")
        assert result["skipped"] == []
        assert [s["name"] for s in result["steps"]] == ["baseline", "async", "bgwriter"]
    finally:
        with psycopg.connect(managed.admin, autocommit=True) as conn:
            for grant in GRANTS:
                conn.execute(grant.replace("grant ", "revoke ").replace(" to ", " from "))
            left = conn.execute(
                "select name from pg_file_settings where sourcefile like '%auto.conf'"
            ).fetchall()
    assert left == []


def test_a_lab_database_another_role_left_is_one_line(
    managed: Managed, createdb: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed as the superuser left pgopt_lab; the monitor role cannot drop it."""
    with psycopg.connect(managed.admin, autocommit=True) as conn:
        conn.execute("create database pgopt_lab")
        conn.execute(f"comment on database pgopt_lab is '{LAB_COMMENT}'")
    try:
        args = ["lab", "run", "smoke", "--dsn", managed.dsn, *SHORT, "--out", str(tmp_path)]
        code, _, err = run(capsys, managed.password, *args)
        assert code == 2
        line = one_line(err)
        assert "database pgopt_lab, left by an earlier pgopt run, cannot be dropped" in line
        assert "must be owner" in line and "drop it as its owner" in line
    finally:
        with psycopg.connect(managed.admin, autocommit=True) as conn:
            conn.execute("drop database if exists pgopt_lab")


@pytest.fixture
def local_monitor() -> Iterator[str]:
    """A database and a monitor role of this test's own on the machine's PostgreSQL 15."""
    if not local_server_answers():
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    name = f"pgopt_managed_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(LOCAL_DSN, autocommit=True) as conn:
        conn.execute(f"create database {name}")
        conn.execute(
            f"create role {name} login nosuperuser noreplication nocreatedb nocreaterole "
            "in role pg_monitor, pg_read_all_data"
        )
    base = LOCAL_DSN.rsplit("/", 1)[0]
    try:
        with psycopg.connect(f"{base}/{name}", autocommit=True) as conn:
            conn.execute(SCHEMA)
        yield f"{base}/{name}".replace("postgres@", f"{name}@")
    finally:
        with psycopg.connect(LOCAL_DSN, autocommit=True) as conn:
            conn.execute(f"drop database if exists {name} with (force)")
            conn.execute(f"drop role if exists {name}")


def test_the_read_only_commands_on_postgresql_15(
    local_monitor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "advise"
    args = ["advise", "--dsn", local_monitor, "--sample", "1", "--out", str(out)]
    code, _, _ = run(capsys, None, *args)
    assert code == 0
    doc = json.loads((out / "advice.json").read_text())
    assert doc["evidence"]["server_version_num"] // 10000 == 15
    # what it could not check is for the extension's absence, not the role's
    reasons = [n["reason"] for n in doc["not_checked"]]
    assert reasons and all("pg_stat_statements is not installed" in r for r in reasons), reasons
    args = ["tune", "--dsn", local_monitor, "--storage", "ssd", "--format", "sql"]
    code, text, err = run(capsys, None, *args)
    assert code == 0 and "ALTER SYSTEM SET" in text
    assert "GRANT ALTER SYSTEM ON PARAMETER" in err
