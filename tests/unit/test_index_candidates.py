"""The index advisor's pure parts on stored EXPLAIN JSON: scans read from plans,
candidates in the right column order, coverage by existing indexes, the set chosen
under a write load."""

from typing import Any

from pgopt.indexes.candidates import (
    Candidate,
    ColumnStats,
    ExistingIndex,
    TableFacts,
    candidates_for,
    covering_index,
    estimated_bytes,
    key_classes,
)
from pgopt.indexes.scans import Key, scans_of
from pgopt.indexes.selection import Checked, choose, weigh
from pgopt.indexes.workload import Statement, chosen, from_file, write_of
from pgopt.source.catalog import SourceStatement


def seq_scan(
    filter_: str, output: list[str], table: str = "orders", alias: str = "orders"
) -> dict[str, Any]:
    return {
        "Node Type": "Seq Scan", "Relation Name": table, "Schema": "public", "Alias": alias,
        "Filter": filter_, "Output": output, "Plan Rows": 5, "Total Cost": 2000.0,
    }  # fmt: skip


ORDERS = TableFacts(
    "public.orders",
    rows=100_000,
    pages=1000,
    columns={
        "id": ColumnStats(4, -1),
        "customer_id": ColumnStats(4, 20_000),
        "status": ColumnStats(5, 3),
        "placed_at": ColumnStats(8, -1),
        "total": ColumnStats(4, 1000),
        "note": ColumnStats(40, -0.5),
    },
)


def k(expr: str, desc: bool = False) -> Key:
    return Key(expr, (expr,), desc)


def test_equality_first_most_distinct_first_then_one_range() -> None:
    plan = seq_scan(
        "((orders.status = $1) AND (orders.placed_at > $2) AND (orders.customer_id = $3))",
        ["orders.id", "orders.total"],
    )
    (scan,) = scans_of(plan)
    made, covered = candidates_for(scan, ORDERS, trigram=False, constant_literals=False)
    assert not covered
    assert made[0].keys == (k("customer_id"), k("status"), k("placed_at"))
    # the covering variant: the two columns the statement reads, for an index-only scan
    assert made[1].include == ("id", "total")
    # an UPDATE's scan outputs the row's ctid too, which no index can include
    (scan,) = scans_of(seq_scan("(orders.customer_id = $1)", ["orders.ctid", "orders.total"]))
    made, _ = candidates_for(scan, ORDERS, trigram=False, constant_literals=False)
    assert [c.include for c in made] == [(), ("total",)]


def test_sort_under_a_limit_keeps_directions_after_equality() -> None:
    plan = {
        "Node Type": "Limit", "Total Cost": 10.0,
        "Plans": [{
            "Node Type": "Sort", "Sort Key": ["o.placed_at DESC", "o.id"], "Total Cost": 9.0,
            "Plans": [seq_scan("(o.customer_id = $1)", ["o.id"], alias="o")],
        }],
    }  # fmt: skip
    sort = next(s for s in scans_of(plan) if s.how == "sort under a limit")
    made, _ = candidates_for(sort, ORDERS, trigram=False, constant_literals=False)
    assert made[0].keys == (k("customer_id"), k("placed_at", desc=True), k("id"))
    assert "(customer_id, placed_at DESC, id)" in made[0].ddl()


def test_expression_constant_predicate_and_join_key() -> None:
    plan = {
        "Node Type": "Hash Join", "Hash Cond": "(o.customer_id = c.id)", "Total Cost": 50.0,
        "Plans": [
            seq_scan("(o.status = 'pending'::text)", ["o.id"], alias="o"),
            {"Node Type": "Hash", "Plans": [
                seq_scan("(lower(c.email) = $1)", ["c.id"], table="customers", alias="c")
            ]},
        ],
    }  # fmt: skip
    scans = scans_of(plan)
    orders = next(s for s in scans if s.table == "orders" and s.how == "seq scan")
    ((key, predicate),) = orders.literals
    assert key == k("status") and predicate.startswith("status = CAST('pending'")
    customers = next(s for s in scans if s.table == "customers" and s.how == "seq scan")
    assert customers.equality == [Key("lower(email)", ("email",))]
    join = [s for s in scans if s.how == "join key"]
    assert {(s.table, s.equality[0].expr) for s in join} == {
        ("orders", "customer_id"),
        ("customers", "id"),
    }
    made, _ = candidates_for(customers, ORDERS, trigram=False, constant_literals=False)
    assert made[0].definition() == "USING btree ((lower(email)))"


def test_partial_variant_for_a_constant_predicate() -> None:
    (scan,) = scans_of(
        seq_scan("((orders.status = 'pending'::text) AND (orders.customer_id = $1))", [])
    )
    made, _ = candidates_for(scan, ORDERS, trigram=False, constant_literals=False)
    partial = [c for c in made if c.predicate]
    assert partial and partial[0].keys == (k("customer_id"),)
    assert partial[0].ddl().endswith("WHERE status = CAST('pending' AS text);")


POSTS = TableFacts(
    "public.posts",
    rows=100_000,
    pages=1000,
    columns={
        "user_id": ColumnStats(4, 2_000),
        "blog_id": ColumnStats(4, 500),
        "deleted_at": ColumnStats(8, 2),
    },
)


def test_a_written_value_is_an_example_unless_shown_constant() -> None:
    """`user_id = 1` in a --queries file: an example, a key like a parameter; kept
    by pg_stat_statements' normalized text: a constant, a partial index's predicate.
    IS NULL is a constant either way."""
    plan = seq_scan("((posts.user_id = 1) AND (posts.blog_id = $1))", [], "posts", "posts")
    (scan,) = scans_of(plan)
    example, _ = candidates_for(scan, POSTS, trigram=False, constant_literals=False)
    assert [c.keys for c in example] == [(k("user_id"), k("blog_id"))]
    assert not [c for c in example if c.predicate]
    kept, _ = candidates_for(scan, POSTS, trigram=False, constant_literals=True)
    assert [(c.keys, c.predicate) for c in kept] == [
        ((k("blog_id"),), None),
        ((k("blog_id"),), "user_id = 1"),
    ]
    plan = seq_scan("((posts.deleted_at IS NULL) AND (posts.blog_id = $1))", [], "posts", "posts")
    (scan,) = scans_of(plan)
    made, _ = candidates_for(scan, POSTS, trigram=False, constant_literals=False)
    assert [c.predicate for c in made] == [None, "deleted_at IS NULL"]


def locked_oldest(filter_: str) -> dict[str, Any]:
    """Django's `filter(status=...).order_by("created_at").select_for_update(
    skip_locked=True).first()` on PostgreSQL 18: the row locks between the limit and
    the sort, the varchar column compared as text."""
    scan = seq_scan(filter_, ["id", "created_at", "ctid"], "shop_order", "shop_order")
    sort = {"Node Type": "Sort", "Sort Key": ["shop_order.created_at"], "Plans": [scan]}
    return {"Node Type": "Limit", "Plans": [{"Node Type": "LockRows", "Plans": [sort]}]}


def test_a_binary_coercible_cast_of_a_column_is_the_column() -> None:
    types = {"public.shop_order": {"status": "varchar", "created_at": "timestamptz"}}
    table = TableFacts(
        "public.shop_order",
        rows=100_000,
        pages=1000,
        columns={"status": ColumnStats(6, 3, "varchar"), "created_at": ColumnStats(8, -1)},
    )
    scans = scans_of(locked_oldest("((shop_order.status)::text = $1)"), types)
    assert [s.equality for s in scans] == [[k("status")], [k("status")]]
    sort = next(s for s in scans if s.how == "sort under a limit")
    made, _ = candidates_for(sort, table, trigram=False, constant_literals=True)
    assert made[0].keys == (k("status"), k("created_at"))
    # a cast that converts the value is an expression; so is one of an unknown type
    (scan, _sort) = scans_of(locked_oldest("((shop_order.created_at)::date = $1)"), types)
    assert scan.equality == [Key("CAST(created_at AS date)", ("created_at",))]
    (scan, _sort) = scans_of(locked_oldest("((shop_order.status)::text = $1)"))
    assert not scan.equality[0].is_column


def test_an_operator_class_or_collation_of_its_own_covers_nothing_else() -> None:
    definition = (
        'CREATE INDEX t_e ON public.t USING btree (email varchar_pattern_ops, name COLLATE "C")'
    )
    assert key_classes(definition) == (("varchar_pattern_ops", None), (None, "C"))
    assert key_classes("CREATE UNIQUE INDEX t_u ON public.t USING btree (email)") == (
        (None,),
        (None,),
    )
    email = Candidate("public.t", (k("email"),))
    like = ExistingIndex("t_e", "public.t", (k("email"),), opclasses=("varchar_pattern_ops",))
    assert covering_index(email, (like,)) is None
    c_name = ExistingIndex("t_n", "public.t", (k("name"), k("email")), collations=("C", None))
    assert covering_index(Candidate("public.t", (k("name"),)), (c_name,)) is None
    trigram = Candidate("public.t", (k("email"),), method="gin", opclass="gin_trgm_ops")
    gin = ExistingIndex("t_g", "public.t", (k("email"),), method="gin", opclasses=("gin_trgm_ops",))
    assert covering_index(trigram, (gin,)) == "t_g"


def test_like_gets_a_trigram_index_only_where_pg_trgm_is() -> None:
    (scan,) = scans_of(seq_scan("(orders.note ~~ '%late%'::text)", []))
    with_trgm, _ = candidates_for(scan, ORDERS, trigram=True, constant_literals=False)
    assert with_trgm[0].method == "gin" and "gin_trgm_ops" in with_trgm[0].ddl()
    without, _ = candidates_for(scan, ORDERS, trigram=False, constant_literals=False)
    assert all(c.method == "btree" for c in without)


def test_covered_by_an_existing_index_names_it() -> None:
    existing = (
        ExistingIndex(
            "public.orders_status_customer", "public.orders", (k("status"), k("customer_id"))
        ),
    )
    table = TableFacts(ORDERS.name, ORDERS.rows, ORDERS.pages, ORDERS.columns, existing)
    # equality keys in any order among themselves
    assert covering_index(Candidate("public.orders", (k("customer_id"), k("status"))), existing)
    # a prefix is covered; a leading column the index does not lead with is not
    assert covering_index(Candidate("public.orders", (k("status"),)), existing)
    assert covering_index(Candidate("public.orders", (k("customer_id"),)), existing) is None
    # a sort in the other direction throughout is a backward scan; a mixed one is not
    sorted_ = (ExistingIndex("i", "public.orders", (k("placed_at"), k("id"))),)
    assert covering_index(Candidate("t", (k("placed_at", True), k("id", True))), sorted_)
    assert covering_index(Candidate("t", (k("placed_at", True), k("id"))), sorted_) is None
    # a partial index serves only its own predicate
    partial = (ExistingIndex("p", "public.orders", (k("status"),), predicate="x"),)
    assert covering_index(Candidate("t", (k("status"),)), partial) is None
    (scan,) = scans_of(seq_scan("((orders.customer_id = $1) AND (orders.status = $2))", []))
    made, covered = candidates_for(scan, table, trigram=False, constant_literals=False)
    assert [c.by for c in covered] == ["public.orders_status_customer"]
    assert not made


def test_estimated_size_of_a_btree() -> None:
    one = estimated_bytes(Candidate("public.orders", (k("customer_id"),)), ORDERS)
    # 100,000 entries of 8 + 8 bytes (aligned) + a 4-byte pointer, 90% full pages
    assert 2_000_000 < one < 2_500_000


def statements() -> list[Statement]:
    return [
        Statement("q1", "select * from orders where customer_id = $1", 100, 1000.0),
        Statement("q2", "select * from orders where placed_at > $1", 10, 50.0),
        Statement("q3", "insert into orders values ($1)", 50_000, 4000.0, "insert", "orders"),
    ]


def test_the_set_for_the_workload_weighs_the_writes() -> None:
    base = {"q1": 2000.0, "q2": 2000.0, "q3": 0.01}
    writes_to = {"q3": "public.orders"}
    lookup = Checked(
        Candidate("public.orders", (k("customer_id"),)), "a", 2_000_000, 0.1, {"q1": 8.0}
    )
    # saves 50 ms of reads, costs 4,000 ms of inserts × its write overhead
    ranged = Checked(
        Candidate("public.orders", (k("placed_at"),)), "b", 3_000_000, 0.1, {"q2": 10.0}
    )
    unused = Checked(Candidate("public.orders", (k("status"),)), "c", 1_000_000, 0.1, {})
    tables = {"public.orders": ORDERS}
    weighed = [weigh(c, statements(), base, writes_to, tables) for c in (lookup, ranged, unused)]
    choice = choose(weighed, 5050.0)
    assert [w.checked.name for w in choice.chosen] == ["a"]
    why = dict((w.checked.name, reason) for w, reason in choice.rejected)
    assert why["b"].startswith("costs the writes more than it saves the reads")
    assert why["c"].startswith("the planner uses it for no statement")
    assert [w.checked.name for w in choice.write_rejected] == ["b"]


def test_the_smaller_of_two_indexes_that_serve_alike() -> None:
    base = {"q1": 2000.0}
    plain = Checked(
        Candidate("public.orders", (k("customer_id"),)), "plain", 2_000_000, 0.1, {"q1": 8.0}
    )
    wide = Checked(
        Candidate("public.orders", (k("customer_id"),), ("total",)),
        "wide",
        3_000_000,
        0.1,
        {"q1": 7.5},
    )
    tables = {"public.orders": ORDERS}
    weighed = [weigh(c, statements()[:1], base, {}, tables) for c in (wide, plain)]
    choice = choose(weighed, 1000.0)
    assert [w.checked.name for w in choice.chosen] == ["plain"]
    assert (
        "served as well by plain" in dict((w.checked.name, r) for w, r in choice.rejected)["wide"]
    )


def test_statements_taken_as_ab_takes_them_and_from_a_file() -> None:
    rows = [
        SourceStatement("1", "select * from t where a = $1", 10, 900.0),
        SourceStatement("2", "select * from t where b = $1", 10, 90.0),
        SourceStatement("3", "select * from t where c = $1", 10, 9.0),
        SourceStatement("5", "select pg_stat_statements_reset()", 1, 500.0),
        SourceStatement("6", "select * from pg_stat_activity", 1, 400.0),
        SourceStatement("7", "copy public.t (a) to stdout", 1, 300.0),
        SourceStatement("4", "update t set a = $1, b = $2 where id = $3", 1, 1.0),
    ]
    taken = chosen(rows, 0.9)
    # pgopt's and pg_dump's own statements are no part of the application's workload
    assert [s.query for s in taken] == [
        "select * from t where a = $1",
        "update t set a = $1, b = $2 where id = $3",
    ]
    assert taken[1].sets == ("a", "b") and taken[1].writes == "update"
    assert [s.query for s in from_file("select ';' ;\n-- note\nselect 2;")] == [
        "select ';'",
        "select 2",
    ]
    assert [s.query for s in from_file("select 1\nselect 2\n")] == ["select 1", "select 2"]
    assert write_of("selec oops") == (None, None, ())


def test_many_columns_by_equality_get_the_most_distinct_few_and_the_most_distinct_alone() -> None:
    """A statement comparing 40 columns: no 40-key index (PostgreSQL refuses past 32,
    and the keys past the most selective add size), but the three most distinct and,
    beside it, the most distinct alone, for the copy's planner to weigh."""
    wide = TableFacts(
        "public.wide",
        rows=100_000,
        pages=5000,
        columns={f"c{i}": ColumnStats(4, 10 * (i + 1)) for i in range(40)},
    )
    conditions = " AND ".join(f"(wide.c{i} = ${i + 1})" for i in range(40))
    (scan,) = scans_of(seq_scan(f"({conditions})", ["wide.c0"], "wide", "wide"))
    made, _ = candidates_for(scan, wide, trigram=False, constant_literals=False)
    keys = {c.keys for c in made}
    assert (k("c39"),) in keys
    assert (k("c39"), k("c38"), k("c37")) in keys
    assert all(len(c.keys) <= 3 for c in made)
