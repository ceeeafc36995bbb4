"""Is the server of `--dsn` on this machine? If it is, this machine's memory, CPUs
and disk are its own; if not, `tune` must be told them (`--ram`, `--cpus`).

Decided before any connection, from the DSN alone (`decide`, pure): no host or a
socket folder is the local socket; a loopback address, `localhost` or one of this
machine's own addresses is here; any other address, or a name resolving to one,
is not. After connecting, the server's data directory confirms it
(`confirm`, pure): a local address whose data directory is not visible here is a
container or a tunnel to another machine. Where unprivileged roles cannot read
`data_directory`, the address alone decides, and the reason says so. A server not
here, without `--ram` and `--cpus`, is refused in one line (`refusal`, pure).

The I/O around them: this machine's addresses (`own_addresses`: /proc/net/fib_trie,
/proc/net/if_inet6 and the host name), a host name's addresses, and a folder on the
data directory's disk for the storage probe (`data_disk`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict

from ..errors import UsageError, first_line

PROC = Path("/proc/net")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Locality:
    local: bool
    why: str  # "127.0.0.1 is a loopback address", "db1 (203.0.113.7) is not ..."


def decide(
    conninfo: Mapping[str, str],
    own: Collection[str],
    addresses_of: Callable[[str], Sequence[str]],
) -> Locality:
    """Where the server of a DSN's parameters (libpq's environment merged in) is:
    every host it may connect to must be here for it to be local. `own` is this
    machine's addresses; `addresses_of` what a host name resolves to."""
    host = conninfo.get("hostaddr") or conninfo.get("host") or ""
    if not host and conninfo.get("service"):
        return Locality(False, "its host is in a service file, which pgopt does not read")
    mine = {a for a in map(_address, own) if a is not None}
    verdicts = [_one(h.strip(), mine, addresses_of) for h in host.split(",")]
    remote = [v for v in verdicts if not v.local]
    if remote:
        return remote[0]
    return Locality(True, "; ".join(v.why for v in verdicts))


def _one(host: str, own: set[Address], addresses_of: Callable[[str], Sequence[str]]) -> Locality:
    if not host:
        return Locality(True, "no host: the local socket")
    if host.startswith(("/", "@")):
        return Locality(True, f"the local socket in {host}")
    if host == "localhost":
        return Locality(True, "localhost is this machine")
    address = _address(host)
    if address is not None:
        if address.is_loopback:
            return Locality(True, f"{host} is a loopback address")
        if address in own:
            return Locality(True, f"{host} is one of this machine's addresses")
        return Locality(False, f"{host} is not one of this machine's addresses")
    found = [a for a in map(_address, addresses_of(host)) if a is not None]
    if not found:
        return Locality(False, f"{host} does not resolve here")
    foreign = [a for a in found if not (a.is_loopback or a in own)]
    if foreign:
        return Locality(False, f"{host} ({foreign[0]}) is not one of this machine's addresses")
    return Locality(True, f"{host} ({found[0]}) is this machine")


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.split("%")[0])  # fe80::1%eth0
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def confirm(where: Locality, data_directory: str | None, visible: bool) -> Locality:
    """A local address, checked after connecting against the server's data directory
    (None: this role may not read it; `visible`: the folder exists here)."""
    if not where.local:
        return where
    if data_directory is None:
        return Locality(True, f"{where.why}; its data directory is hidden from this role")
    if visible:
        return Locality(True, f"{where.why}, and its data directory {data_directory} is here")
    return Locality(
        False,
        f"{where.why}, but its data directory {data_directory} is not here "
        "(a container, or a tunnel to another machine?)",
    )


def parse_fib_trie(text: str) -> set[str]:
    """The IPv4 addresses /proc/net/fib_trie marks as this machine's ("host LOCAL")."""
    found, last = set(), None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|--"):
            last = stripped[3:].strip()
        elif stripped.endswith("host LOCAL") and last:
            found.add(last)
    return found


def parse_if_inet6(text: str) -> set[str]:
    """The IPv6 addresses of /proc/net/if_inet6 (32 hex digits first on each line)."""
    found = set()
    for line in text.splitlines():
        fields = line.split()
        if fields and len(fields[0]) == 32:
            found.add(str(ipaddress.IPv6Address(int(fields[0], 16))))
    return found


def own_addresses(proc: Path = PROC) -> frozenset[str]:
    """This machine's addresses, as its network namespace has them."""
    found: set[str] = set()
    for name, parse in (("fib_trie", parse_fib_trie), ("if_inet6", parse_if_inet6)):
        with contextlib.suppress(OSError):
            found |= parse((proc / name).read_text())
    return frozenset(found | set(addresses_of(socket.gethostname())))


def addresses_of(host: str) -> list[str]:
    """What a host name resolves to here (none when it does not)."""
    try:
        return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, None)})
    except (OSError, UnicodeError):
        return []


def of_dsn(dsn: str) -> Locality:
    """`decide` for a DSN, libpq's environment variables beneath its parameters."""
    try:
        params = {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    except psycopg.ProgrammingError as e:
        raise UsageError(f"--dsn: {first_line(e)}") from None
    env = {
        key: os.environ[var]
        for key, var in (("host", "PGHOST"), ("hostaddr", "PGHOSTADDR"), ("service", "PGSERVICE"))
        if os.environ.get(var)
    }
    return decide({**env, **params}, own_addresses(), addresses_of)


def refusal(where: Locality, ram_given: bool, cpus_given: bool) -> str | None:
    """Why tune cannot go on with a server not on this machine (None: it can): its
    memory and CPUs are not this machine's, and must be given."""
    missing = [
        (flag, what)
        for flag, what, given in (("--ram", "memory", ram_given), ("--cpus", "CPUs", cpus_given))
        if not given
    ]
    if where.local or not missing:
        return None
    return (
        f"--dsn: the server is not on this machine ({where.why}): give its "
        f"{' and '.join(w for _, w in missing)} with {' and '.join(f for f, _ in missing)}"
    )


def data_disk(data_directory: str, candidates: Iterable[Path]) -> tuple[Path | None, str]:
    """A writable folder on the data directory's disk, for the storage probe: one of
    `candidates` (the work folder) or the temporary folder on the same device, else
    the mount point of the data directory; None, with why, when none is writable."""
    try:
        device = os.stat(data_directory).st_dev
    except OSError as e:
        return None, f"its data directory cannot be examined here ({e.strerror})"
    mount = Path(data_directory)
    while mount.parent != mount and _device(mount.parent) == device:
        mount = mount.parent
    for folder in (*candidates, Path(tempfile.gettempdir()), mount):
        if _device(folder) == device and os.access(folder, os.W_OK | os.X_OK):
            return folder, ""
    return None, f"no folder on the disk of its data directory ({mount}) is writable here"


def _device(path: Path) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None
