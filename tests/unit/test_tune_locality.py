"""Is the server of --dsn on this machine? The decision as a pure function (no traffic
leaves this machine: addresses and name lookups are given), its confirmation by the
data directory, the refusal of a server elsewhere before any connection, and the
sources that say where each input came from."""

from pathlib import Path

import pytest

from pgopt.cli import main
from pgopt.errors import TargetError
from pgopt.machine import Limit, MachineFacts
from pgopt.tune import server
from pgopt.tune.facts import ServerSettings, platform_of
from pgopt.tune.inputs import Given, Place, assemble
from pgopt.tune.locality import (
    Locality,
    confirm,
    data_disk,
    decide,
    own_addresses,
    parse_fib_trie,
    parse_if_inet6,
    refusal,
)

OWN = {"10.0.0.5", "fd00::2"}
NAMES = {"db1": ["10.0.0.5"], "db2": ["203.0.113.7"], "both": ["10.0.0.5", "203.0.113.7"]}


@pytest.mark.parametrize(
    ("conninfo", "local", "why"),
    [
        ({}, True, "no host: the local socket"),
        ({"host": "/var/run/postgresql"}, True, "the local socket in /var/run/postgresql"),
        ({"host": "@pg"}, True, "the local socket in @pg"),
        ({"host": "127.0.0.1"}, True, "127.0.0.1 is a loopback address"),
        ({"host": "127.3.2.1"}, True, "127.3.2.1 is a loopback address"),
        ({"host": "::1"}, True, "::1 is a loopback address"),
        ({"host": "::ffff:127.0.0.1"}, True, "::ffff:127.0.0.1 is a loopback address"),
        ({"host": "localhost"}, True, "localhost is this machine"),
        ({"host": "10.0.0.5"}, True, "10.0.0.5 is one of this machine's addresses"),
        ({"host": "fd00:0::2"}, True, "fd00:0::2 is one of this machine's addresses"),
        ({"host": "db1"}, True, "db1 (10.0.0.5) is this machine"),
        ({"host": "192.0.2.1"}, False, "192.0.2.1 is not one of this machine's addresses"),
        ({"host": "db2"}, False, "db2 (203.0.113.7) is not one of this machine's addresses"),
        ({"host": "both"}, False, "both (203.0.113.7) is not one of this machine's addresses"),
        ({"host": "nowhere"}, False, "nowhere does not resolve here"),
        # libpq tries each host in turn: every one must be here
        ({"host": "127.0.0.1,db2"}, False, "db2 (203.0.113.7) is not one of"),
        ({"host": "/tmp,127.0.0.1"}, True, "the local socket in /tmp; 127.0.0.1 is a loopback"),
        # hostaddr is where libpq connects; host is then only the name
        ({"host": "db2", "hostaddr": "127.0.0.1"}, True, "127.0.0.1 is a loopback address"),
        ({"service": "prod"}, False, "its host is in a service file"),
    ],
)
def test_where_the_server_is_decided_from_the_dsn_alone(
    conninfo: dict[str, str], local: bool, why: str
) -> None:
    where = decide(conninfo, OWN, lambda host: NAMES.get(host, []))
    assert where.local is local and where.why.startswith(why)


def test_the_data_directory_confirms_a_local_address() -> None:
    here = Locality(True, "127.0.0.1 is a loopback address")
    seen = confirm(here, "/var/lib/postgresql/15/main", visible=True)
    assert seen.local and seen.why.endswith(
        "its data directory /var/lib/postgresql/15/main is here"
    )
    hidden = confirm(here, None, visible=False)  # a role without pg_read_all_settings
    assert hidden.local and hidden.why.endswith("its data directory is hidden from this role")
    tunnel = confirm(here, "/var/lib/postgresql/data", visible=False)
    assert not tunnel.local and "a container, or a tunnel to another machine?" in tunnel.why
    elsewhere = Locality(False, "x")
    assert confirm(elsewhere, "/var/lib/postgresql/data", visible=True) == elsewhere


def test_a_server_elsewhere_needs_its_memory_and_cpus() -> None:
    away = Locality(False, "203.0.113.7 is not one of this machine's addresses")
    assert refusal(away, ram_given=False, cpus_given=False) == (
        "--dsn: the server is not on this machine (203.0.113.7 is not one of this machine's"
        " addresses): give its memory and CPUs with --ram and --cpus"
    )
    assert str(refusal(away, ram_given=True, cpus_given=False)).endswith("CPUs with --cpus")
    assert refusal(away, ram_given=True, cpus_given=True) is None
    assert refusal(Locality(True, "here"), ram_given=False, cpus_given=False) is None


FIB_TRIE = """Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 2
           |-- 192.0.2.0
              /24 link UNICAST
           |-- 192.0.2.2
              /32 host LOCAL
"""
IF_INET6 = """00000000000000000000000000000001 01 80 10 80       lo
fd000000000000000000000000000002 04 40 00 82     eth0
"""


def test_this_machines_addresses_are_read_from_proc(tmp_path: Path) -> None:
    assert parse_fib_trie(FIB_TRIE) == {"127.0.0.0", "127.0.0.1", "192.0.2.2"}
    assert parse_if_inet6(IF_INET6) == {"::1", "fd00::2"}
    (tmp_path / "fib_trie").write_text(FIB_TRIE)
    (tmp_path / "if_inet6").write_text(IF_INET6)
    assert {"192.0.2.2", "fd00::2"} <= own_addresses(tmp_path)


@pytest.mark.parametrize(
    ("version", "platform"),
    [
        (
            "PostgreSQL 15.20 (Debian 15.20-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc",
            "linux",
        ),
        ("PostgreSQL 17.2 on aarch64-apple-darwin23.6.0, compiled by Apple clang", "mac"),
        ("PostgreSQL 17.2, compiled by Visual C++ build 1942, 64-bit", "windows"),
        ("PostgreSQL 16.4 on amd64-portbld-freebsd14.1, compiled by FreeBSD clang", "other"),
        ("linux", "linux"),  # sys.platform, for a dry run
    ],
)
def test_the_servers_platform_is_read_from_its_version(version: str, platform: str) -> None:
    assert platform_of(version) == platform


def test_a_probe_folder_is_found_on_the_data_directorys_disk(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    assert data_disk(str(data), [tmp_path]) == (tmp_path, "")
    folder, why = data_disk(str(tmp_path / "absent"), [tmp_path])
    assert folder is None and "cannot be examined here" in why


MACHINE = MachineFacts(Limit(8 * 2**30, "host"), Limit(4, "affinity"), 2**30, 0, 0)
SERVER = ServerSettings(150000, 300, 500, {}, "linux")


def test_the_sources_say_where_each_input_came_from() -> None:
    inputs, sources = assemble(Given(), MACHINE, None, SERVER)
    assert not inputs.connections_known and not inputs.db_known
    assert sources["connections"].startswith("not known: PostgreSQL's default")
    assert "pgtune's profile takes its default, 1x to 3x RAM" in sources["db_size"]
    assert (sources["ram"], sources["cpus"]) == ("host", "affinity")
    local = Place("--dsn, on this machine (x)", users=True, unmeasured="y")
    inputs, sources = assemble(Given(), MACHINE, None, SERVER, local)
    assert inputs.connections_known and inputs.db_known and inputs.connections == 300
    assert sources["ram"] == "host; the server is on this machine"
    assert sources["storage"] == "assumed ssd (not measured: y; --storage gives it)"
    assert sources["db_size"] == "the server's databases"
    away = Place("--dsn, not on this machine (z)", users=True, here=False)
    given = Given(ram_bytes=2**34, cpus=16, connections=50)
    inputs, sources = assemble(given, MACHINE, None, SERVER, away)
    assert (inputs.ram_mb, inputs.cpus, inputs.connections) == (16384, 16, 50)
    assert inputs.shm_mb == 0  # this machine's /dev/shm is not the server's
    assert (sources["ram"], sources["cpus"], sources["connections"]) == (
        "--ram",
        "--cpus",
        "--connections",
    )
    assert "the server is not on this machine" in sources["storage"]


def test_a_server_elsewhere_is_refused_before_any_connection(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal comes from the DSN alone: reading the server, which connects, is
    never reached (a TEST-NET-3 address, never routed: nothing leaves this machine)."""
    assert "203.0.113.7" not in own_addresses()
    connected = []
    monkeypatch.setattr(server, "read", lambda conninfo: connected.append(conninfo))
    dsn = "postgresql://me:secret@203.0.113.7:5432/shop"
    assert main(["tune", "--dsn", dsn]) == 2
    assert main(["tune", "--dsn", dsn, "--ram", "16GB", "--dry-run"]) == 2
    assert main(["tune", "--measure", "--dsn", dsn, "--allow-settings", "--cpus", "8"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "pgopt: error: --dsn: the server is not on this machine (203.0.113.7 is not one of "
        f"this machine's addresses): give its {what}"
        for what in (
            "memory and CPUs with --ram and --cpus",
            "CPUs with --cpus",
            "memory with --ram",
        )
    ]
    assert connected == []


def test_a_server_here_is_read_without_ram_or_cpus(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def read(conninfo: dict[str, str]) -> ServerSettings:
        raise TargetError(f"reached {conninfo['host']}")

    monkeypatch.setattr(server, "read", read)
    assert main(["tune", "--dsn", "postgresql://me@127.0.0.1:1/shop"]) == 2
    assert main(["tune", "--dsn", "host=/var/run/postgresql dbname=shop"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "pgopt: error: reached 127.0.0.1",
        "pgopt: error: reached /var/run/postgresql",
    ]


def test_a_local_address_whose_data_directory_is_elsewhere_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A port on 127.0.0.1 may lead into a container or through a tunnel: the server's
    data directory, once read, says whether this machine's figures are its own."""
    elsewhere = {"data_directory": {"setting": str(tmp_path / "not-here")}}
    monkeypatch.setattr(server, "read", lambda _: ServerSettings(150000, 100, 10, elsewhere))
    assert main(["tune", "--dsn", "postgresql://me@127.0.0.1:5433/shop"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "pgopt: error: --dsn: the server is not on this machine (127.0.0.1 is a loopback "
        f"address, but its data directory {tmp_path / 'not-here'} is not here (a container, "
        "or a tunnel to another machine?)): give its memory and CPUs with --ram and --cpus"
    ]
