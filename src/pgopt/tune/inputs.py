"""A profile's inputs put together, each with where it came from (pure): the machine
as the container sees it or as `--ram`/`--cpus` model it, the storage as probed or
as `--storage` models it, and the server's version, platform, connections and data
size. A throwaway server's max_connections (PostgreSQL's default) and databases
(empty) answer nothing about the user's: they stand in for pgopt's profile, and
are marked not known, so that pgtune's profile takes its own defaults for them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..machine import MachineFacts
from .facts import ServerSettings, Storage
from .profile import Inputs

# Typical figures of a storage class, for a machine given by --storage rather than
# probed: a random 8 kB read (µs), an 8 kB page of a sequential read (µs), and how
# many more random reads a queue of 8 serves than a queue of 1.
MODELLED = {
    "hdd": (8000.0, 100.0, 1.0),
    "ssd": (100.0, 15.0, 4.0),
    "nvme": (40.0, 5.0, 8.0),
    "san": (500.0, 20.0, 8.0),
}


@dataclass(frozen=True)
class Given:
    """What the command line says instead of measuring."""

    ram_bytes: int | None = None
    cpus: int | None = None
    storage: str | None = None
    connections: int | None = None
    db_bytes: int | None = None
    disk_free_bytes: int | None = None
    db_type: str = "web"


@dataclass(frozen=True)
class Place:
    """The server the inputs are for, as the sources say it."""

    server: str  # "a throwaway server ...", "--dsn, on this machine (...)"
    users: bool = False  # the user's server (--dsn): its max_connections and data answer
    here: bool = True  # on this machine: its memory, CPUs and /dev/shm are this one's
    unmeasured: str = "the server is not on this machine"  # why the storage was not probed
    measured: str = ""  # what the probed folder stands for ("the disk of its data directory")


THROWAWAY = Place("a throwaway server on this machine, started and removed")


def assemble(
    given: Given,
    machine: MachineFacts,
    storage: Storage | None,
    server: ServerSettings,
    place: Place = THROWAWAY,
) -> tuple[Inputs, dict[str, Any]]:
    """The inputs, and a record of each one's value and source (for the report)."""
    ram = given.ram_bytes or machine.memory.value
    cpus = given.cpus or machine.cpus.value
    here = "; the server is on this machine" if place.users and place.here else ""
    sources: dict[str, Any] = {
        "server": place.server,
        "ram": "--ram" if given.ram_bytes else machine.memory.source + here,
        "cpus": "--cpus" if given.cpus else machine.cpus.source + here,
        "platform": "the server's version()",
    }
    if storage is not None and given.storage is None:
        read_us, seq_us, gain = storage.read_us, storage.seq_page_us, storage.read_gain
        storage_class = storage.storage_class()
        sources["storage"] = (
            f"measured in {storage.folder} ({storage.filesystem}"
            + (", O_DIRECT" if storage.direct else ", page cache: the reads came from memory")
            + ")"
            + (f", {place.measured}" if place.measured else "")
        )
    else:
        storage_class = given.storage or "ssd"
        read_us, seq_us, gain = MODELLED[storage_class]
        sources["storage"] = (
            "--storage (typical figures of the class)"
            if given.storage
            else f"assumed ssd (not measured: {place.unmeasured}; --storage gives it)"
        )
    free = given.disk_free_bytes or (storage.free_mb * 2**20 if storage else 40 * 2**30)
    sources["disk_free"] = (
        "--disk-free" if given.disk_free_bytes else "measured" if storage else "assumed 40 GB"
    )
    db_known = given.db_bytes is not None or place.users
    db_bytes = given.db_bytes if given.db_bytes is not None else server.data_mb * 2**20
    sources["db_size"] = (
        "--db-size"
        if given.db_bytes is not None
        else "the server's databases"
        if place.users
        else "not known: the throwaway server's (pgtune's profile takes its default, 1x to 3x"
        " RAM; --db-size gives it)"
    )
    connections_known = given.connections is not None or place.users
    connections = given.connections or server.max_connections
    sources["connections"] = (
        "--connections"
        if given.connections
        else "the server's max_connections"
        if place.users
        else "not known: PostgreSQL's default, the throwaway server's (pgtune's profile takes"
        " its own for the type; --connections gives it)"
    )
    inputs = Inputs(
        ram_mb=ram // 2**20,
        cpus=cpus,
        connections=connections,
        version=server.major,
        db_mb=db_bytes // 2**20,
        storage=storage_class,
        db_type=given.db_type,
        disk_free_mb=free // 2**20,
        read_us=read_us,
        seq_page_us=seq_us,
        read_gain=gain,
        fsync_us=(storage.fsync_us or 0.0) if storage else 0.0,
        connections_known=connections_known,
        db_known=db_known,
        platform=server.platform,
        shm_mb=(machine.shm_bytes or 0) // 2**20 if place.here else 0,
        filesystem=storage.filesystem if storage else "",
    )
    return inputs, sources
