"""The server a configuration is for, read: its settings as pg_settings describes
them (type, unit, bounds, choices, context, boot value; `data_directory` among
them only for a role allowed to read it), its version and the platform it was
built for, its max_connections and how much data it holds, and what the role
reading them may change (ALTER SYSTEM, on a managed server: nothing server-wide).
From `--dsn` (a read-only session), or from a throwaway embedded server started
and removed."""

from __future__ import annotations

from typing import Any

import psycopg

from ..binaries import PgBinaries
from ..errors import TargetError, first_line
from ..queries import load
from ..redact import redact_dsn
from ..servers import read_only
from ..servers.attached import setting_rights
from ..servers.embedded import EmbeddedTarget
from .facts import ServerSettings, platform_of


def read(conninfo: dict[str, Any]) -> ServerSettings:
    with psycopg.connect(**conninfo, autocommit=True, connect_timeout=10) as conn:
        rows = read_only.dict_rows(conn, load("tune_settings"))
        built = read_only.dict_rows(conn, "select version()")[0]
        rights = setting_rights(conn)
    first = rows[0]
    return ServerSettings(
        version_num=int(first["version_num"]),
        max_connections=int(first["max_connections"]),
        data_mb=int(first["data_bytes"]) // 2**20,
        pg_settings={r["name"]: dict(r) for r in rows},
        platform=platform_of(str(built["version"])),
        rights=rights,
    )


def from_dsn(dsn: str) -> ServerSettings:
    try:
        return read(read_only.session_params(dsn, "tune"))
    except psycopg.Error as e:
        raise TargetError(f"cannot read {redact_dsn(dsn)}: {first_line(e)}") from e


def from_embedded(binaries: PgBinaries) -> ServerSettings:
    """The settings of the server pgopt would start from `binaries` (started, read,
    stopped and removed)."""
    with EmbeddedTarget(binaries) as server:
        return read(server.conninfo("postgres"))
