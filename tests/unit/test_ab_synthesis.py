"""The synthesized workload without a server: what each $n of a normalized statement
stands for, which statements are taken or skipped and why, how parameters are
drawn, and the fidelity of a replay."""

import random
import re

import pytest

from pgopt.ab.fidelity import fidelity, fidelity_markdown, widest_gaps
from pgopt.ab.sql_params import ColumnUse, Table, shape_of
from pgopt.ab.synthesize import (
    DRAW,
    Catalog,
    Column,
    Pool,
    SourceStatement,
    pool_from_rows,
    pool_from_stats,
    select,
    synthesize,
)
from pgopt.ab.workload_files import workload_markdown
from pgopt.model.result import Run, Statement

CATALOG = Catalog(
    tables={
        ("public", "orders"): {
            "id": Column(1, "bigint", True),
            "customer_id": Column(2, "integer", False),
            "status": Column(3, "text", False),
        },
        ("public", "customers"): {
            "id": Column(1, "integer", True),
            "name": Column(2, "text", False),
        },
    },
    visible={"orders": "public", "customers": "public"},
)
ORDERS, CUSTOMERS = Table(None, "orders"), Table(None, "customers")


def shape(query: str):  # type: ignore[no-untyped-def]
    return shape_of(query, CATALOG.column_names)


def test_each_parameter_is_bound_to_the_column_it_is_compared_with() -> None:
    s = shape(
        "select * from orders o join customers c on c.id = o.customer_id "
        "where o.status = $1 and c.id in ($2, $3) and $4 < o.customer_id limit $5 offset $6"
    )
    assert s.refusal is None and s.kind == "select"
    assert s.params == {
        1: ColumnUse(ORDERS, "status"),
        2: ColumnUse(CUSTOMERS, "id"),
        3: ColumnUse(CUSTOMERS, "id"),
        4: ColumnUse(ORDERS, "customer_id"),
        5: "limit",
        6: "offset",
    }


def test_unqualified_columns_are_placed_by_the_table_that_has_them() -> None:
    s = shape("select * from orders, customers where name = $1 and status like $2")
    assert s.params == {1: ColumnUse(CUSTOMERS, "name"), 2: ColumnUse(ORDERS, "status")}
    # a subquery's tables stay in the subquery: the outer `id` is the customers'
    s = shape("select * from customers, (select customer_id from orders) o where id = $1")
    assert s.params == {1: ColumnUse(CUSTOMERS, "id")}
    # `id` is in both: ambiguous, so not bound
    assert shape("select * from orders, customers where id = $1").refusal is not None


def test_writes_are_bound_to_the_columns_they_write() -> None:
    s = shape("insert into orders (customer_id, status) values ($1, $2)")
    assert s.params == {
        1: ColumnUse(ORDERS, "customer_id", written=True),
        2: ColumnUse(ORDERS, "status", written=True),
    }
    s = shape("insert into orders values ($1, $2, $3)")
    assert s.params[1] == ColumnUse(ORDERS, "id", written=True)
    s = shape("update orders set status = $1 where id = $2::bigint")
    assert s.params == {1: ColumnUse(ORDERS, "status", written=True), 2: ColumnUse(ORDERS, "id")}


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("begin", "transaction control"),
        ("set work_mem = $1", "session state"),
        ("create index on orders (status)", "utility or DDL (Index)"),
        ("copy orders to stdout", "COPY"),
        ("select * from pg_stat_activity where pid = $1", "system catalog"),
        ("select pg_sleep($1) from orders", "calls pg_sleep"),
        ("select pg_catalog.pg_is_in_recovery()", "reads no table"),
        ("select pg_advisory_xact_lock(id) from orders where id = $1", "side effects"),
        ("update orders set customer_id = customer_id + $1 where id = $2", "$1 is not compared"),
        ("select * from orders where id = any($1)", "$1 is not compared"),
        ("select 1; select 2", "several statements"),
        ("selec * from orders", "parser does not read it"),
        ("select * into t from orders", "SELECT INTO"),
    ],
)
def test_what_cannot_be_replayed_says_why(query: str, reason: str) -> None:
    assert reason in (shape(query).refusal or "")


def statement(query: str, calls: int, total_ms: float) -> SourceStatement:
    return SourceStatement(str(abs(hash(query))), query, calls, total_ms)


STATEMENTS = [
    statement("select * from orders where id = $1", 6000, 300.0),
    statement("select count(*) from orders where status = $1", 1000, 500.0),
    statement("insert into orders (id, status) values ($1, $2)", 500, 150.0),
    statement("set application_name = $1", 900, 40.0),
    statement("select * from customers where name = $1", 10, 10.0),
]


def test_the_statements_making_up_the_cover_are_taken_heaviest_first() -> None:
    chosen = select(STATEMENTS, CATALOG, cover=0.9)
    taken = [c.statement.query for c in chosen.candidates]
    assert taken == [STATEMENTS[1].query, STATEMENTS[0].query]
    # the INSERT writes the unique id: values from the data would collide
    assert [k.statement.query for k in chosen.skipped] == [STATEMENTS[2].query]
    assert "unique" in chosen.skipped[0].reason
    assert chosen.chosen_share == pytest.approx(950 / 1000)
    everything = select(STATEMENTS, CATALOG, cover=1.0)
    assert len(everything.candidates) + len(everything.skipped) == len(STATEMENTS)


POOLS = {
    ("public", "orders", "id"): pool_from_stats("bigint", None, None, ["1", "500", "1000"], 0.0),
    ("public", "orders", "status"): pool_from_stats(
        "text", ["new", "it's paid"], [0.75, 0.25], None, 0.0
    ),
}


def test_scripts_are_weighted_by_calls_and_draw_each_parameter_from_its_column() -> None:
    synthesis = synthesize(select(STATEMENTS, CATALOG, cover=0.9), CATALOG, POOLS)
    q1, q2 = synthesis.scripts
    assert (q1.name, q1.weight, q2.name, q2.weight) == ("q01", 1000, "q02", 6000)
    assert "\\set pgopt_r1 random(1, 10000)" in q1.text
    # text: a CASE the planner folds, quotes doubled; the last value is the ELSE
    assert (
        "status = (case when :pgopt_r1 <= 7500 then 'new' else 'it''s paid' end)::text" in q1.text
    )
    # integers: uniform within each histogram bucket, through a pgbench variable
    assert (
        "\\set pgopt_p1 case when :pgopt_r1 <= 5000 then random(1, 500) "
        "else random(500, 1000) end" in q2.text
    )
    assert q2.text.rstrip().endswith("select * from orders where id = :pgopt_p1;")
    assert synthesis.replayed_share == pytest.approx(0.8)
    readme = workload_markdown(synthesis)
    assert "q01.sql@1000" in readme and "## Not replayed" in readme and "unique" in readme


def test_a_column_without_values_skips_its_statement() -> None:
    pools = {**POOLS, ("public", "orders", "status"): pool_from_rows([])}
    synthesis = synthesize(select(STATEMENTS, CATALOG, cover=0.9), CATALOG, pools)
    assert [s.statement.query for s in synthesis.scripts] == [STATEMENTS[0].query]
    assert any("no values of orders.status" in k.reason for k in synthesis.skipped)


def test_statistics_give_common_values_their_frequency_and_the_rest_to_the_histogram() -> None:
    pool = pool_from_stats("integer", ["7", "9"], [0.5, 0.2], ["10", "20", "30"], 0.1)
    assert pool.values == (("7", 0.5), ("9", 0.2))
    assert [(lo, hi) for lo, hi, _ in pool.ranges] == [(10, 20), (20, 30)]
    assert [w for _, _, w in pool.ranges] == pytest.approx([0.1, 0.1])
    text = pool_from_stats("text", None, None, ["a", "m", "z"], 0.0)
    assert [v for v, _ in text.values] == ["a", "m", "z"]
    assert [w for _, w in text.values] == pytest.approx([1 / 3] * 3)


def test_the_drawn_values_follow_the_weights() -> None:
    """Evaluate the CASE the script holds on uniform draws: each value's share is its
    weight's share, within sampling error (seeded, exact)."""
    pool = Pool((("a", 0.6), ("b", 0.3), ("c", 0.1)), (), "pg_stats")
    synthesis = synthesize(
        select([statement("select * from orders where status = $1", 10, 1.0)], CATALOG),
        CATALOG,
        {("public", "orders", "status"): pool},
    )
    arms = re.findall(r"when :pgopt_r1 <= (\d+) then '(\w)'", synthesis.scripts[0].text)
    rng, counts = random.Random(7), {"a": 0, "b": 0, "c": 0}
    for _ in range(20_000):
        r = rng.randint(1, DRAW)
        counts[next((v for cut, v in arms if r <= int(cut)), "c")] += 1
    assert counts["a"] / 20_000 == pytest.approx(0.6, abs=0.015)
    assert counts["b"] / 20_000 == pytest.approx(0.3, abs=0.015)
    assert counts["c"] / 20_000 == pytest.approx(0.1, abs=0.015)


def test_fidelity_puts_the_replays_shares_beside_the_sources() -> None:
    synthesis = synthesize(select(STATEMENTS, CATALOG, cover=0.9), CATALOG, POOLS)
    runs = tuple(
        Run(
            rep=i,
            value=1.0,
            script_transactions=(140, 860),
            statements=(Statement(1, 0.5, "select count(*) ..."), Statement(2, 0.05, "select *")),
        )
        for i in (1, 2)
    )
    rows = fidelity(synthesis, runs)
    assert rows is not None
    q1, q2 = rows
    assert (q1.source_calls, q1.replay_calls) == pytest.approx((1 / 7, 0.14))
    assert (q1.source_time, q2.source_time) == pytest.approx((500 / 800, 300 / 800))
    assert q1.replay_time == pytest.approx(140 * 0.5 / (140 * 0.5 + 860 * 0.05))
    calls_gap, _ = widest_gaps(rows)
    assert calls_gap == pytest.approx(abs(0.14 - 1 / 7) * 100)
    text = fidelity_markdown(rows, synthesis)
    assert "| q01 |" in text and f"Calls within {calls_gap:.1f} points" in text
    # a single script has no per-script counts: nothing to compare
    assert fidelity(synthesis, (Run(rep=1, value=1.0),)) is None
