"""Which pgbench scripts write: read with PostgreSQL's own parser; what it cannot
read, or might write, counts as writing."""

import pytest

from pgopt.engine.script_writes import script_statements, script_write


@pytest.mark.parametrize(
    "script",
    [
        "\\set k random(1, 100)\nselect * from t where id = :k;\n",
        "begin;\nselect 1;\nshow work_mem;\nset work_mem = '8MB';\ncommit;\n",
        "explain select * from t;\n",
        "select ';' as semicolon, $$ insert $$ from t; -- insert into t\n",
        "with x as (select 1) select * from x;\n",
        "\\set a 1 \\\n  + 2\nselect :a;\n",  # a meta-command continued on the next line
    ],
)
def test_scripts_that_only_read(script: str) -> None:
    assert script_write(script) is None


@pytest.mark.parametrize(
    ("script", "found"),
    [
        ("insert into t values (:k);", "insert into t values ($1)"),
        ("select 1;\nupdate t set v = 1;", "update t set v = 1"),
        ("with d as (delete from t returning *) select * from d;", "with d as (delete"),
        ("select * from t for update skip locked;", "for update"),
        ("select * into u from t;", "select * into u"),
        ("set default_transaction_read_only = off;", "default_transaction_read_only"),
        ("do $$ begin perform 1; end $$;", "do $$"),
        ("call p();", "call p()"),
        ("create temp table x (a int);", "create temp table"),
        ("selec broken;", "cannot read"),
    ],
)
def test_scripts_that_may_write(script: str, found: str) -> None:
    why = script_write(script)
    assert why is not None and found in why


def test_variables_become_parameters_and_meta_commands_are_left_out() -> None:
    script = "\\set k random(1, 10)\n\\sleep 1 ms\nselect :k::int from t where a = :k;"
    assert script_statements(script) == ["select $1::int from t where a = $1"]
