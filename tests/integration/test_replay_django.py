"""`pgopt ab --synthesize` against an application whose SQL an ORM writes: the
Django 5.2 web shop of bench/shop/ (psycopg 3), its workers running on a source
server while pgopt watches them, or while the server logs every statement. What
the ORM sends is replayed: the case-insensitive lookup (`UPPER(email::text) =
UPPER($1)`), `bulk_create`'s `INSERT ... SELECT * FROM UNNEST($1::int4[], ...)`,
every write; and the replayed calls read the rows the source's did. The plumbing,
not a ratio: one round of one second.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgopt.binaries import PgBinaries
from pgopt.cli import main
from pgopt.servers.embedded import EmbeddedTarget
from pgopt.store import load_document

from .conftest import FULL_SPEED, new_database

pytest.importorskip("django", reason="Django is not installed (pip install -e '.[dev]')")
SHOP = Path(__file__).resolve().parents[2] / "bench" / "shop_load.py"
LOOKUP = 'WHERE UPPER("shopapp_customer"."email"::text) = UPPER($1)'
BULK = 'INSERT INTO "shopapp_orderline" ("order_id", "product_id", "quantity", "price") SELECT'

pytestmark = pytest.mark.xdist_group("django")  # one source server for the module


@pytest.fixture(scope="module")
def shop(binaries: PgBinaries) -> Iterator[tuple[EmbeddedTarget, str]]:
    """A source server with the shop's tables at a fifth of its scale (4,000 customers,
    10,000 orders), analyzed."""
    with EmbeddedTarget(binaries) as source:
        dsn = new_database(source, "shop")
        shop_load(dsn, "prepare", "--scale", "0.2")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("vacuum analyze")
        yield source, dsn


def shop_load(dsn: str, *args: str) -> None:
    subprocess.run([sys.executable, str(SHOP), "--dsn", dsn, *args], check=True, timeout=120)


def start_shop(dsn: str, seconds: int) -> subprocess.Popen[bytes]:
    """The shop running for `seconds` once its workers have sent their first request's
    statements (Django's start takes seconds on a machine busy with the whole suite,
    and a watch that begins before it sees nothing of the shop)."""
    run = [sys.executable, str(SHOP), "--dsn", dsn, "run", "--workers", "2"]
    client = subprocess.Popen([*run, "--seconds", str(seconds)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    with psycopg.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline and client.poll() is None:
            row = conn.execute(
                "select count(*) from pg_stat_statements where query like '%shopapp_%'"
            ).fetchone()
            if row is not None and row[0] > 0:
                break
            time.sleep(0.2)
    return client


def replayed(out: Path) -> dict[str, dict[str, Any]]:
    """The fidelity's statements, by their source text."""
    return {s["query"]: s for s in load_document(out)["fidelity"]["statements"]}


def every_statement_replayed(fidelity: dict[str, Any], out: Path) -> None:
    """Every statement of the shop's the replay looked at (the heaviest 90% of the
    time, and every write) is replayed: none left out for its shape. What else the
    source ran (Django's look at the catalog, this test's ALTER SYSTEM) may be left
    out, with why; pgopt's own reads of the source are not the source's workload."""
    readme = (out / "workload" / "README.md").read_text()
    left_out = readme.split("## Not replayed")[1] if "## Not replayed" in readme else ""
    # a statement the capture's 3 s did not see is left out for that, and said so
    shaped = [row for row in left_out.splitlines() if "not run while the log was" not in row]
    assert not [row for row in shaped if "shopapp_" in row], left_out
    assert "count(*) as sessions" not in readme  # pgopt's own watch of pg_stat_activity
    assert not fidelity["dropped_writes"], fidelity


def lookups_and_bulk_inserts_replayed(out: Path) -> None:
    """The run in `out` replayed every shop statement, the lookup and the bulk insert
    among them, each reading or writing the rows a source's call did."""
    every_statement_replayed(load_document(out)["fidelity"], out)
    statements = replayed(out)
    for text in (LOOKUP, BULK):
        row = the(statements, text)
        assert row["replay_calls"] > 0, row
        # a lookup finds its one customer; a bulk insert writes an order's lines
        assert 1 / 1.5 <= row["replay_rows"] / row["source_rows"] <= 1.5, row


def the(statements: dict[str, dict[str, Any]], text: str) -> dict[str, Any]:
    (found,) = [s for q, s in statements.items() if text in q]
    return found


AB = ["--b-setting", "synchronous_commit=off", "--reps", "1", "--duration", "1", *FULL_SPEED]


def test_an_orms_lookups_and_bulk_inserts_are_replayed_while_pgopt_watches(
    shop: tuple[EmbeddedTarget, str], workdir: Path, tmp_path: Path
) -> None:
    _, dsn = shop
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
    client = start_shop(dsn, 6)
    try:
        command = ["ab", "--source-dsn", dsn, "--synthesize", "--source-sample", "3", *AB]
        code = main([*command, "--workdir", str(workdir), "--out", str(tmp_path / "out")])
    finally:
        client.wait(timeout=60)
    assert code == 0
    lookups_and_bulk_inserts_replayed(tmp_path / "out")
    readme = (tmp_path / "out" / "workload" / "README.md").read_text()
    # Django on psycopg 3 binds its values into the statement's text: the watch sees
    # them (drawn from where it saw a statement 20 times, which a machine busy with
    # other tests may not give it in 3 s), and the bulk insert's arrays go as one call
    # the watch saw had them, or are drawn from the statistics
    (values,) = [line for line in readme.splitlines() if "| the values its clients send |" in line]
    assert "the watch's look at the calls its clients sent" in values, values
    bulk = [line for line in readme.splitlines() if BULK in line]
    assert bulk, readme
    (name,) = {line.split("|")[1].strip() for line in bulk}
    notes = [line for line in readme.splitlines() if line.startswith(f"- {name}: ")]
    assert notes and all("calls from the watch" in n or "array of" in n for n in notes), notes


def test_an_orms_statements_are_replayed_from_a_log_capture_with_their_values(
    shop: tuple[EmbeddedTarget, str], workdir: Path, tmp_path: Path
) -> None:
    source, dsn = shop
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
        conn.execute("alter system set log_min_duration_statement = 0")
        conn.execute("select pg_reload_conf()")
    start = source.log_file.stat().st_size
    try:
        start_shop(dsn, 3).wait(timeout=60)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("alter system reset log_min_duration_statement")
            conn.execute("select pg_reload_conf()")
    log = tmp_path / "capture.log"
    with source.log_file.open("rb") as lines:
        lines.seek(start)
        log.write_bytes(lines.read())
    out = tmp_path / "out"
    command = ["ab", "--source-dsn", dsn, "--synthesize", "--source-log", str(log), *AB]
    assert main([*command, "--workdir", str(workdir), "--out", str(out)]) == 0
    lookups_and_bulk_inserts_replayed(out)
    # the bulk insert's arrays as one captured call had them: the statement written
    # once per call, its arrays as literals, and pgbench picks one call
    scripts = "\n".join(p.read_text() for p in (out / "workload").glob("*.sql"))
    inserts = {
        line
        for line in scripts.splitlines()
        if line.startswith("INSERT") and BULK.split("INSERT ")[1] in line
    }
    assert len(inserts) > 1 and "pgopt_c" not in scripts
    for line in inserts:
        assert ":pgopt_" not in line and line.count("'{") >= 4, line
