"""Names and relation kinds, pure: a name as PostgreSQL's quote_ident writes it
(checked against the server in test_advise_kinds.py's DDL), quoted mixed-case
scans and their candidates' DDL, a partition's scan on its parent, and what a
copy of some relations takes and leaves out."""

from typing import Any

from pgopt.ab.relations import CopyList, Relation, copy_list
from pgopt.indexes.advisor import on_root
from pgopt.indexes.candidates import ColumnStats, TableFacts, candidates_for
from pgopt.indexes.live import existing_index, relations
from pgopt.indexes.scans import Key, scans_of
from pgopt.sqltree import qualified, quote_ident, relations_named, split_qualified, unquoted


def test_quote_ident_as_postgresql_writes_it() -> None:
    assert [quote_ident(n) for n in ("orders", "_x1", "name", "value")] == [
        "orders", "_x1", "name", "value",
    ]  # fmt: skip
    # upper case, a space, a dollar, a double quote; a reserved, a column-name and a
    # type-or-function keyword
    assert [quote_ident(n) for n in ("Id", "a b", "a$b", 'x"y', "user", "int", "left")] == [
        '"Id"', '"a b"', '"a$b"', '"x""y"', '"user"', '"int"', '"left"',
    ]  # fmt: skip
    assert qualified("Bar", "Foo") == '"Bar"."Foo"' and qualified("public", "t") == "public.t"
    assert [unquoted(t) for t in ('"Id"', "id", '"x""y"', '"id"', "lower(id)")] == [
        "Id", "id", 'x"y', None, None,
    ]  # fmt: skip
    assert split_qualified('"Bar.x"."Foo"') == ("Bar.x", "Foo")
    assert split_qualified("orders") == ("public", "orders")


def test_relations_named_are_quoted_as_sql_needs_them() -> None:
    query = 'select * from "Bar"."Foo" f join posts_view v on v.id = f."Id" join "Mixed" m on true'
    assert relations_named(query) == ('"Bar"."Foo"', "posts_view", '"Mixed"')


QUOTED_SCAN = {
    "Node Type": "Seq Scan", "Relation Name": "Foo", "Schema": "Bar", "Alias": "Foo",
    "Filter": '("Foo"."Id" = $1)', "Output": ['"Foo"."Name"', '"Foo"."Id"', "Foo.ctid"],
    "Plan Rows": 1, "Total Cost": 1000.0,
}  # fmt: skip


def test_a_quoted_mixed_case_scan_makes_ddl_postgresql_takes() -> None:
    (scan,) = scans_of(QUOTED_SCAN)
    assert scan.qualified == '"Bar"."Foo"'
    assert scan.equality == [Key('"Id"', ("Id",))] and scan.equality[0].is_column
    assert scan.output == ["Name", "Id"]
    table = TableFacts(
        '"Bar"."Foo"', 60_000, 900, {c: ColumnStats(8, -1) for c in ("Id", "Name", "payload")}
    )
    fresh, covered = candidates_for(scan, table, trigram=False, constant_literals=False)
    assert covered == []
    assert [c.ddl() for c in fresh] == [
        'CREATE INDEX CONCURRENTLY "Foo_Id_idx" ON "Bar"."Foo" USING btree ("Id");',
        'CREATE INDEX CONCURRENTLY "Foo_Id_cov_idx" ON "Bar"."Foo" USING btree ("Id") '
        'INCLUDE ("Name");',
    ]
    assert relations(QUOTED_SCAN) == ['"Bar"."Foo"']


def test_an_existing_quoted_index_covers_the_quoted_candidate() -> None:
    row: dict[str, Any] = {
        "name": '"Bar"."Foo_Id_idx"', "table_name": '"Bar"."Foo"', "method": "btree",
        "valid": True, "key_count": 1, "options": [0], "columns": ['"Id"', '"Name"'],
        "predicate": None,
        "definition": 'CREATE INDEX "Foo_Id_idx" ON "Bar"."Foo" USING btree ("Id") '
        'INCLUDE ("Name")',
    }  # fmt: skip
    index = existing_index(row)
    assert index.keys == (Key('"Id"', ("Id",)),) and index.include == ("Name",)
    (scan,) = scans_of(QUOTED_SCAN)
    table = TableFacts('"Bar"."Foo"', 60_000, 900, indexes=(index,))
    fresh, covered = candidates_for(scan, table, trigram=False, constant_literals=False)
    assert fresh == [] and {c.by for c in covered} == {'"Bar"."Foo_Id_idx"'}


def test_a_partitions_scan_is_one_of_its_parent() -> None:
    plan = {
        "Node Type": "Seq Scan", "Relation Name": "events_2024_01", "Schema": "public",
        "Alias": "events_1", "Filter": "(events_1.account_id = $1)", "Plan Rows": 5,
    }  # fmt: skip
    (scan,) = scans_of(plan)
    moved = on_root(scan, {"public.events_2024_01": "public.events"})
    assert moved.qualified == "public.events" and moved.equality == scan.equality
    assert on_root(scan, {}) is scan


def test_a_copy_takes_what_it_needs_and_leaves_out_what_it_cannot() -> None:
    relations_ = [
        Relation("public.events", "p", asked=("events",)),
        Relation("public.events_1", "r", needs=("public.events",)),
        Relation("public.events_remote", "f", needs=("public.events",)),
        Relation("public.posts", "r", needs=("public.accounts",)),
        Relation("public.accounts", "r"),
        Relation("public.mixed", "v", needs=("public.posts", "public.remote")),
        Relation("public.remote", "f"),
        Relation("public.above", "v", needs=("public.mixed",)),
        Relation("public.secret", "r", readable=False),
        Relation("public.pg_stat_statements", "v", extension="pg_stat_statements"),
        Relation('"Bar"."Foo"', "m", asked=('"Bar"."Foo"',)),
    ]
    listed = copy_list(("events", "public.*", '"Bar"."Foo"'), relations_)
    assert listed.tables == (
        "public.events", "public.events_1", "public.posts", "public.accounts", '"Bar"."Foo"',
        "public.*",
    )  # fmt: skip
    assert listed.left_out == {
        "public.events_remote": "a foreign table: its rows are on another server",
        "public.remote": "a foreign table: its rows are on another server",
        "public.secret": "this role may not read it: grant it SELECT to have it copied",
        "public.pg_stat_statements": (
            "a relation of the extension pg_stat_statements: install it on the copy's server"
        ),
        "public.mixed": "needs public.remote, which is left out",
        "public.above": "needs public.mixed, which is left out",
    }
    assert listed.why_not("events") is None
    assert listed.why_not("public.mixed") == "needs public.remote, which is left out"
    assert listed.schemas_sql() == 'CREATE SCHEMA IF NOT EXISTS "Bar";\n'
    assert CopyList(("public.t",)).schemas_sql() == ""
