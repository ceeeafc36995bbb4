"""One statement classifier on PostgreSQL's parser (statement_kind.py): what a
statement writes, whatever comments, parentheses or case surround it; transaction
control as the server reads it (savepoints stay inside the transaction, AND CHAIN
begins the next); and, for a text cut short, its first keyword by the scanner."""

from __future__ import annotations

import pytest

from pgopt.advise.behind import commit_kind
from pgopt.engine.script_writes import script_write
from pgopt.indexes.workload import write_of
from pgopt.replay.selection import Skipped
from pgopt.source.catalog import SourceStatement
from pgopt.statement_kind import Control, kind_of


@pytest.mark.parametrize(
    ("query", "writes", "target"),
    [
        ("/* app */ update t set a = 1 where id = $1", "update", "t"),
        ("-- c\ninsert into s.t values ($1)", "insert", "s.t"),
        ('INSERT INTO "Odd Name" VALUES (1)', "insert", "Odd Name"),
        ("with gone as (delete from q returning *) select * from gone", "delete", "q"),
        ("merge into t using s on t.id = s.id when matched then delete", "merge", "t"),
        ("copy t from stdin", "copy", "t"),
        ("select * into t2 from t", "select into", "t2"),
        ("create table t3 as select 1", "select into", "t3"),
        ("explain analyze update t set a = 2", "update", "t"),
        ("select * from t where a = $1", None, None),
        ("copy t to stdout", None, "t"),
        ("select $1 as update", None, None),
    ],
)
def test_a_write_is_what_the_parser_reads(
    query: str, writes: str | None, target: str | None
) -> None:
    kind = kind_of(query)
    assert kind.parsed and (kind.writes, kind.target) == (writes, target)


@pytest.mark.parametrize(
    ("query", "writes"),
    [
        ("(insert into t values (1", "insert"),  # cut at track_activity_query_size
        ("/* x */ update t set a = 'unterminated", None),  # the scanner cannot read it
        ("with x as (update t set a = 1 returning *) select * from x where", "update"),
        ("with x as (select * from t for update) selec", None),
        ("select * from t where", None),
    ],
)
def test_a_text_cut_short_is_read_by_its_first_keyword(query: str, writes: str | None) -> None:
    kind = kind_of(query)
    assert not kind.parsed and kind.writes == writes


@pytest.mark.parametrize(
    ("query", "control", "opens", "ends"),
    [
        ("begin", Control.BEGIN, True, False),
        ("START TRANSACTION ISOLATION LEVEL SERIALIZABLE", Control.BEGIN, True, False),
        ("commit", Control.COMMIT, False, True),
        ("END", Control.COMMIT, False, True),
        ("abort", Control.ROLLBACK, False, True),
        ("commit and chain", Control.COMMIT, True, True),
        ("rollback and chain", Control.ROLLBACK, True, True),
        ("savepoint sa_savepoint_1", Control.SAVEPOINT, False, False),
        ("release savepoint sa_savepoint_1", Control.RELEASE, False, False),
        ("rollback to savepoint sa_savepoint_1", Control.ROLLBACK_TO, False, False),
        ("prepare transaction 'x'", Control.PREPARE, False, True),
        ("commit prepared 'x'", Control.COMMIT_PREPARED, False, False),
    ],
)
def test_transaction_control(query: str, control: Control, opens: bool, ends: bool) -> None:
    kind = kind_of(query)
    assert (kind.control, kind.opens, kind.ends) == (control, opens, ends)


def test_row_locks_session_state_and_plans() -> None:
    assert kind_of("select * from t for update skip locked").locks_rows
    assert kind_of("with x as (select 1) select * from t for share").locks_rows
    assert kind_of("set search_path = app").session == "search_path"
    assert kind_of("select 1").plannable and not kind_of("explain select 1").plannable
    assert kind_of("explain select 1").explained
    assert kind_of("select 1; insert into t values (1)").writes == "insert"


def test_every_caller_reads_a_commented_write_as_a_write() -> None:
    """The replay's selection, advise, the index advisor and the engine's templates
    read `/* app */ update ...` alike (the replay's regex did not)."""
    query = "/* app */ update t set a = 1 where id = $1"
    assert Skipped(SourceStatement("1", query, 1, 1.0, 1), 0.1, "why").writes
    assert commit_kind(query) == "write"
    assert write_of(query) == ("update", "t", ("a",))
    assert script_write(query.replace("$1", ":id") + ";") is not None
    assert commit_kind("commit and chain") == "commit"
    assert script_write("begin;\nselect 1;\nrollback to savepoint s;\ncommit;\n") is None
