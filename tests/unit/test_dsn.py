"""A connection string is read by libpq's parser before anything else, its secrets
registered first (servers/dsn.py): one libpq cannot read is one line that names
neither the string nor its password, through every option and file that takes one;
a client program gets the password in its environment, never on its command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgopt.cli import main
from pgopt.redact import redactor
from pgopt.servers.dsn import accept, for_client, secrets_in

# each unreadable by libpq, each with its password in it
UNREADABLE = {
    "postgresql://app:hunter2@[::1/prod": "hunter2",  # the issue's own
    "postgresql://app:s3%cret@localhost/prod": "s3%cret",  # a bad percent-encoding
    "host=db password='hunter 3": "hunter 3",  # an unterminated quote
    "postgresql://app@db/prod?password=pw%zz4&sslmode=x=": "pw%zz4",
}


@pytest.mark.parametrize("dsn", sorted(UNREADABLE))
@pytest.mark.parametrize(
    "argv",
    [
        ["advise", "--dsn"],
        ["ab", "--synthesize", "--source-dsn"],
        ["lab", "run", "smoke", "--dry-run", "--dsn"],
        ["tune", "--dsn"],
        ["lab", "run", "replicas", "--dsn", "host=/tmp", "--standby-dsn"],
    ],
    ids=["advise", "ab", "lab", "tune", "standby"],
)
def test_an_unreadable_dsn_is_one_line_without_its_password(
    dsn: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, dsn]) == 2
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("pgopt: error: "), lines
    assert "not a connection string libpq can read" in lines[0]
    assert UNREADABLE[dsn] not in captured.err + captured.out
    assert dsn not in captured.err


def test_an_ab_toml_source_dsn_is_read_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ab.toml").write_text(
        '[data]\nsource_dsn = "postgresql://app:hunter5@[::1/prod"\n[workload]\nsynthesize = true\n'
    )
    assert main(["ab", str(tmp_path / "ab.toml")]) == 2
    err = capsys.readouterr().err
    assert "source_dsn: not a connection string" in err and "hunter5" not in err


def test_secrets_are_read_from_the_text_as_written_and_decoded() -> None:
    assert secrets_in("postgresql://u:p%40ss@h/d") == {"p%40ss", "p@ss"}
    assert secrets_in("host=h password='it''s' sslpassword=k") >= {"k"}
    assert secrets_in(r"host=h password='a\'b'") == {"a'b"}
    assert secrets_in("postgresql://h/d?sslmode=require&password=x1") == {"x1"}
    assert secrets_in("postgresql://u@h/d") == set()


def test_a_readable_dsns_decoded_password_is_redacted() -> None:
    params = accept("postgresql://app:s3%63ret@localhost/prod", "--dsn")
    assert params["password"] == "s3cret"
    assert redactor("connection for app failed: s3cret") == "connection for app failed: ***"


def test_a_client_program_gets_the_password_in_its_environment() -> None:
    conninfo, env = for_client("postgresql://app:pa55word@db.example:6543/prod?sslmode=disable")
    assert "pa55word" not in conninfo
    assert "host=db.example" in conninfo and "port=6543" in conninfo
    assert "sslmode=disable" in conninfo
    assert env["PGPASSWORD"] == "pa55word"
    assert not any(k.startswith("PG") and k != "PGPASSWORD" for k in env)


def test_the_users_options_are_kept_and_pgopts_added_after_them() -> None:
    """A user's `-c search_path=app` stays; pgopt's read-only options come after it (of
    two -c of one setting, the later holds: a DSN cannot lift read-only)."""
    from pgopt.servers.read_only import READ_ONLY, session_params, with_options

    dsn = "host=db dbname=prod options='-c search_path=app -c default_transaction_read_only=off'"
    options = session_params(dsn, "advise")["options"]
    assert options.startswith("-c search_path=app -c default_transaction_read_only=off ")
    assert options.rindex("default_transaction_read_only=on") > options.index("=off")
    assert with_options({"host": "db"}, READ_ONLY) == {"host": "db", "options": READ_ONLY}


def test_the_wait_sampler_keeps_the_users_options() -> None:
    from typing import Any

    from pgopt.observe.sampler import Scope, WaitSampler

    class Server:
        def conninfo(self, dbname: str | None = None) -> dict[str, Any]:
            return {"host": "db", "options": "-c search_path=app"}

        def backend_cpu_s(self, pid: int) -> float | None:
            return None

    sampler = WaitSampler(Server(), scope=Scope(("prod",), ()), read_only=True)
    options = sampler.session_params()["options"]
    assert options == "-c search_path=app -c default_transaction_read_only=on"


def test_a_redis_urls_password_is_kept_out_of_what_a_probe_says() -> None:
    from pgopt.cli.connection import read_url
    from pgopt.probes.counters import redis_unavailable

    url = "redis://:R3dis-pw@127.0.0.1:1/0"
    read_url(None, None, url)  # type: ignore[arg-type]  # as the option's callback is called
    reason = redis_unavailable(type("Ctx", (), {"redis_url": url})())
    assert reason is not None and "R3dis-pw" not in redactor(reason)
    assert "R3dis-pw" not in reason
