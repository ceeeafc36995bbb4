"""`pgopt ab --synthesize --source-log FILE` reads what a real server logged: a bulk
INSERT of 200 KiB, the statement PostgreSQL writes whole into its csvlog, jsonlog
and stderr log (the logging collector on, as on a production server), is read from
each as one statement with its values and matched to pg_stat_statements (csv's own
limit is a field of 128 KiB)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.replay.from_source import synthesize_from
from pgopt.servers.embedded import EmbeddedTarget

from .conftest import new_database

ROWS = 100
BODY = "x" * 2048  # a row's text: 100 rows, over 200 KiB


@pytest.fixture(scope="module")
def logging_source(binaries: PgBinaries) -> Iterator[EmbeddedTarget]:
    """A source whose logging collector writes every statement in each of the formats."""
    settings = {
        "logging_collector": "on",
        "log_destination": "stderr,csvlog,jsonlog",
        "log_min_duration_statement": "0",
        "log_line_prefix": "%m [%p] %q%u@%d ",  # Debian's: each test's database named
    }
    with EmbeddedTarget(binaries, base_settings=settings) as target:
        yield target


@pytest.mark.parametrize("destination", ["csvlog", "jsonlog", "stderr"])
def test_a_bulk_insert_of_200_kib_logged_by_the_server_is_read_from_its_log(
    logging_source: EmbeddedTarget, destination: str, tmp_path: Path
) -> None:
    dsn = new_database(logging_source, "bulk")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create table notes (id int primary key, body text not null)")
        conn.execute("select pg_stat_statements_reset()")
        rows = ", ".join(f"({i}, '{BODY}{i}')" for i in range(ROWS))
        bulk = f"insert into notes (id, body) values {rows}"
        assert len(bulk) > 200 << 10
        conn.execute(bulk)
        row = conn.execute(
            "select current_setting('data_directory') || '/' || pg_current_logfile(%s)",
            [destination],
        ).fetchone()
    assert row is not None
    log = tmp_path / f"server.{destination}"
    log.write_bytes(Path(row[0]).read_bytes())
    synthesis = synthesize_from(dsn, 1.0, log=log)
    (insert,) = [b for b in synthesis.blocks if b.statement.query.startswith("insert into notes")]
    assert synthesis.workload.values_from.startswith("the log capture ("), synthesis.workload
    # each row's body is the logged one (its id a new key: no two inserts collide)
    taken = [line for line in insert.lines if ": from the log capture (1 calls" in line]
    assert len(taken) == ROWS, insert.lines[:4]
