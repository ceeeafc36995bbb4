"""The source server's own settings that shape how its statements run, carried to the
throwaway server an A/B runs on, so that A is the source as it is configured and B
is one change to that: `read_settings` reads them, `carried` chooses.

A replay on PostgreSQL's defaults measures another server: a source with
`work_mem = 64MB` and `random_page_cost = 1.1` plans its statements otherwise, and
a B of `synchronous_commit = off` on a source already running with it is no change
at all. What is carried is what the source's server and database give a new session
(pg_settings.reset_val, so the reading session's own options do not count), set by
its configuration, command line or database (not values PostgreSQL sizes itself),
where it differs from PostgreSQL's built-in value, in the groups that set how statements
plan and run: memory, the planner, WAL and checkpoints, background writing, I/O
and parallel workers, autovacuum, and the default isolation level.

Left with pgopt: what belongs to the source's machine or would stop the throwaway
server starting here (huge pages, shared memory kinds, the stack depth, the I/O
method, wal_sync_method, wal_level), connections, logging, archiving, replication,
libraries and their options, timeouts (they would cut pgopt's own template builds
short); and each role's own settings (ALTER ROLE ... SET), which pgopt does not see
for the application's role. shared_buffers is held to a quarter of this machine's
memory where the source's is more, and said.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import psycopg

from ..servers.read_only import dict_rows
from ..servers.setting_units import in_unit, server_value, unit_bytes
from ..words import plural

CARRIED_GROUPS = (
    "Resource Usage / Memory",
    "Resource Usage / Asynchronous Behavior",  # up to PostgreSQL 17
    "Resource Usage / I/O",  # from 18
    "Resource Usage / Worker Processes",  # from 18
    "Resource Usage / Background Writer",
    "Write-Ahead Log / Settings",
    "Write-Ahead Log / Checkpoints",
    "Query Tuning",  # its planner groups, every one
    "Autovacuum",  # up to 17
    "Vacuuming / Automatic Vacuuming",  # from 18
)
CARRIED_NAMES = frozenset({"default_transaction_isolation"})
LEFT_WITH_PGOPT = frozenset(
    {
        "huge_pages",
        "huge_page_size",
        "shared_memory_type",
        "dynamic_shared_memory_type",
        "min_dynamic_shared_memory",
        "max_stack_depth",
        "max_prepared_transactions",
        "io_method",
        "io_workers",
        "wal_sync_method",
        "wal_level",
    }
)
# where a value the source's own server or database sets comes from; not PostgreSQL's
# defaults (the built-in, and those it sizes itself: wal_buffers, the SLRU buffers),
# not a role's (the reading role's are not the application's), not this session's
SET_BY = ("configuration file", "command line", "environment variable", "global", "database")
SHARED_BUFFERS_SHARE = 4  # at most a quarter of this machine's memory
SAY_AT_MOST = 6  # settings named in the one line said before the copy


@dataclass(frozen=True)
class SettingRow:
    """One row of the source's pg_settings, as read."""

    name: str
    value: str  # reset_val: what a new session gets
    boot: str  # boot_val: PostgreSQL's built-in value
    unit: str | None
    category: str
    vartype: str  # integer, real, bool, enum, string


@dataclass(frozen=True)
class CarriedSettings:
    """The source's settings A and B start from (NAME -> value with its unit), and
    what was changed or left out on the way, in words."""

    values: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for the terminal: how many, and the first few."""
        if not self.values:
            return "the source sets none of the settings pgopt carries: A runs on defaults"
        shown = ", ".join(f"{k}={v}" for k, v in list(self.values.items())[:SAY_AT_MOST])
        more = len(self.values) - SAY_AT_MOST
        rest = f" and {more} more" if more > 0 else ""
        return (
            f"A and B start from the source's {plural(len(self.values), 'setting')} that "
            f"shape{'s' if len(self.values) == 1 else ''} how statements run: {shown}{rest} "
            "(--setting NAME=VALUE overrides one)"
        )


def read_settings(conn: psycopg.Connection[Any]) -> list[SettingRow]:
    """The source's pg_settings, as a new session on its database gets them."""
    rows = dict_rows(
        conn,
        "select name, reset_val, boot_val, unit, category, vartype from pg_settings "
        f"where source in ({', '.join(repr(s) for s in SET_BY)})",
    )
    return [
        SettingRow(
            str(r["name"]),
            str(r["reset_val"]),
            str(r["boot_val"]),
            r["unit"] and str(r["unit"]),
            str(r["category"]),
            str(r["vartype"]),
        )
        for r in rows
    ]


def carried(
    rows: Iterable[SettingRow], known: frozenset[str], memory_bytes: int
) -> CarriedSettings:
    """The settings of `rows` to carry to a server that knows the setting names
    `known`, on a machine of `memory_bytes`."""
    values: dict[str, str] = {}
    notes: list[str] = []
    for row in sorted(rows, key=lambda r: r.name):
        if not _carried(row) or row.value == row.boot:
            continue
        if row.name not in known:
            notes.append(
                f"{row.name} = {_with_unit(row)} left out: this PostgreSQL has no such setting"
            )
            continue
        values[row.name] = _with_unit(row)
    cap = memory_bytes // SHARED_BUFFERS_SHARE
    source = values.get("shared_buffers")
    if source is not None and (in_unit(source, "B") or 0) > cap:
        values["shared_buffers"] = _blocks(cap)
        notes.append(
            f"shared_buffers held to {values['shared_buffers']} (a quarter of this machine's "
            f"memory); the source's is {source}"
        )
    return CarriedSettings(values, tuple(notes))


def _carried(row: SettingRow) -> bool:
    if row.name in LEFT_WITH_PGOPT:
        return False
    if row.name in CARRIED_NAMES:
        return True
    return any(row.category == g or row.category.startswith(f"{g} / ") for g in CARRIED_GROUPS)


def _with_unit(row: SettingRow) -> str:
    """The value as ALTER SYSTEM takes it back: `16384` of unit `8kB` is `128MB`."""
    return server_value(
        {"setting": row.value, "boot_val": row.boot, "vartype": row.vartype, "unit": row.unit}
    )


def _blocks(size: int) -> str:
    """`size` bytes as whole blocks of 8kB, written as a person would."""
    blocks = size // (unit_bytes("8kB") or 1)
    return server_value(
        {"setting": str(blocks), "boot_val": "", "vartype": "integer", "unit": "8kB"}
    )
