"""Shard servers for a lab that spreads its data over several PostgreSQL instances
through postgres_fdw (seed 003's "shard by user across instances").

pgopt starts each shard as an embedded server of its own (own folder, port and
owner file: stopped, removed and reaped like any other), runs the lab's shard
setup on each, and makes every shard a foreign server of the coordinator (the
lab's own server): `shard1` .. `shardN`, with a user mapping for pgopt's user.
The lab's SQL then builds on them: foreign tables, foreign partitions, options.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from psycopg import sql

from ..psql import Psql
from .base import Target
from .embedded import EmbeddedTarget

FDW_EXTENSION = "postgres_fdw"


def unavailable(coordinator: Target) -> str | None:
    """Why this server cannot have throwaway shards, or None."""
    if not isinstance(coordinator, EmbeddedTarget):
        return "the shards lab starts its own shard servers beside pgopt's embedded one"
    if not coordinator.binaries.has_extension_library(FDW_EXTENSION):
        return f"{FDW_EXTENSION} is not in {coordinator.binaries.bindir}'s PostgreSQL"
    return None


def shard_name(number: int) -> str:
    return f"shard{number}"


@contextmanager
def shards_of(
    coordinator: EmbeddedTarget,
    count: int,
    setup: tuple[Path, ...],
    variables: dict[str, str],
    say: Callable[[str], None],
) -> Iterator[tuple[EmbeddedTarget, ...]]:
    """`count` shard servers, each set up with the lab's shard files (with the
    variables `shard`, 1-based, and `shards`) and known to the coordinator as a
    foreign server; stopped and removed on the way out."""
    with ExitStack() as stack:
        nodes: list[EmbeddedTarget] = []
        for number in range(1, count + 1):
            say(f"starting {shard_name(number)} of {count}")
            node = stack.enter_context(
                EmbeddedTarget(coordinator.binaries, workdir=coordinator.workdir_base)
            )
            psql = Psql(node.binaries, node.client_env())
            own = {**variables, "shard": str(number), "shards": str(count)}
            for path in setup:
                psql.run_file(path, own, what=f"{shard_name(number)} setup file")
            nodes.append(node)
        register(coordinator, nodes)
        yield tuple(nodes)


def register(coordinator: Target, shards: list[EmbeddedTarget]) -> None:
    """Each shard as the coordinator's foreign server `shardN`, reached through its
    socket as pgopt's user (the embedded servers trust local connections)."""
    with coordinator.connect() as conn:
        conn.execute(
            sql.SQL("create extension if not exists {}").format(sql.Identifier(FDW_EXTENSION))
        )
        for number, shard in enumerate(shards, 1):
            info = shard.conninfo()
            name = sql.Identifier(shard_name(number))
            conn.execute(sql.SQL("drop server if exists {} cascade").format(name))
            conn.execute(
                sql.SQL(
                    "create server {} foreign data wrapper {} options (host {}, port {}, dbname {})"
                ).format(
                    name,
                    sql.Identifier(FDW_EXTENSION),
                    sql.Literal(str(info["host"])),
                    sql.Literal(str(info["port"])),
                    sql.Literal(str(info["dbname"])),
                )
            )
            conn.execute(
                sql.SQL("create user mapping for current_user server {} options (user {})").format(
                    name, sql.Literal(str(info["user"]))
                )
            )
