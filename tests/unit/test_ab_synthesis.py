"""The synthesized workload without a server: what each $n of a normalized statement
stands for, which statements are taken or left out and why, how parameters are
drawn (ranges sized to the source's rows per call, new unique keys, assumed
operands), how statements become transactions, and the fidelity of a replay."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import replace
from fractions import Fraction

import pytest

from pgopt.replay.param_binding import ColumnUse, Operand
from pgopt.replay.parameters import written_wanted
from pgopt.replay.replayable import shape_of
from pgopt.replay.scripts import TRANSACTIONS, cells_of
from pgopt.replay.selection import select
from pgopt.replay.synthesize import synthesize
from pgopt.replay.values.draws import (
    DRAW,
    Pool,
    RangeDraw,
    compact,
    pool_from_rows,
    pool_from_stats,
    pool_from_values,
    sample,
)
from pgopt.replay.workload_files import keys_sql, workload_markdown
from pgopt.source.catalog import Catalog, Column, SourceStatement, SourceWorkload, Table

CATALOG = Catalog(
    tables={
        ("public", "orders"): {
            "id": Column(1, "bigint", True, largest="1000"),
            "customer_id": Column(2, "integer", False),
            "status": Column(3, "text", False),
        },
        ("public", "customers"): {
            "id": Column(1, "integer", True),
            "name": Column(2, "text", False),
        },
        ("public", "notes"): {"body": Column(1, "text", True)},
    },
    visible={"orders": "public", "customers": "public", "notes": "public"},
    sizes={("public", "orders"): (1000.0, 10.0)},
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
    s = shape("select * from customers, (select customer_id from orders) o where id = $1")
    assert s.params == {1: ColumnUse(CUSTOMERS, "id")}
    assert shape("select * from orders, customers where id = $1").refusal is not None


def test_writes_ranges_operands_and_aggregates_are_told_apart() -> None:
    s = shape("insert into orders (customer_id, status) values ($1, $2)")
    assert s.params == {
        1: ColumnUse(ORDERS, "customer_id", written=True),
        2: ColumnUse(ORDERS, "status", written=True),
    }
    assert shape("insert into orders values ($1, $2, $3)").params[1] == ColumnUse(
        ORDERS, "id", written=True
    )
    # sysbench's UPDATE: $2 added to k is in no column
    s = shape("update orders set customer_id = customer_id + $2 where id = $1")
    assert s.refusal is None
    assert s.params == {2: Operand(ORDERS, "customer_id", "+"), 1: ColumnUse(ORDERS, "id")}
    # a range from both sides, by BETWEEN or by a pair of comparisons
    for query in (
        "select status from orders where id between $1 and $2",
        "select status from orders where $2 >= id and id > $1 order by status",
    ):
        (span,) = shape(query).spans
        assert (span.table, span.column, span.low, span.high) == (ORDERS, "id", 1, 2)
    assert shape("select sum(customer_id) from orders where id between $1 and $2").aggregates
    assert not shape("select status from orders where id between $1 and $2").aggregates


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
        ("select $1::int from orders", "$1 is not compared"),
        ("select 1; select 2", "several statements"),
        ("selec * from orders", "parser does not read it"),
        ("select * into t from orders", "SELECT INTO"),
    ],
)
def test_what_cannot_be_replayed_says_why(query: str, reason: str) -> None:
    assert reason in (shape(query).refusal or "")


def statement(query: str, calls: int, total_ms: float, rows: int = 0) -> SourceStatement:
    return SourceStatement(str(abs(hash(query))), query, calls, total_ms, rows, 0)


STATEMENTS = [
    statement("select * from orders where id = $1", 6000, 300.0, 6000),
    statement("select count(*) from orders where status = $1", 1000, 500.0, 1000),
    statement("insert into orders (id, status) values ($1, $2)", 500, 150.0, 500),
    statement("set application_name = $1", 900, 40.0),
    statement("select * from customers where name = $1", 10, 10.0, 10),
    statement("insert into notes (body) values ($1)", 5, 1.0, 5),
]
POOLS = {
    ("public", "orders", "id"): pool_from_stats(
        "bigint", None, None, ["1", "500", "1000"], 0.0, 1000.0
    ),
    ("public", "orders", "status"): pool_from_stats(
        "text", ["new", "it's paid"], [0.75, 0.25], None, 0.0, 1000.0
    ),
}


def test_the_cover_is_taken_heaviest_first_and_every_write_besides() -> None:
    chosen = select(STATEMENTS, CATALOG, cover=0.45)
    taken = [c.statement.query for c in chosen.candidates]
    # 45% of the time: the count; then the writes, however light, never the rest
    assert taken == [STATEMENTS[1].query, STATEMENTS[2].query]
    (left,) = chosen.skipped
    assert left.statement.query == STATEMENTS[5].query and left.writes
    assert "unique and neither an integer nor a uuid" in left.reason
    everything = select(STATEMENTS, CATALOG, cover=1.0)
    assert len(everything.candidates) + len(everything.skipped) == len(STATEMENTS)


def test_a_captured_transactions_statements_are_taken_whatever_the_cover() -> None:
    """From a log capture, a light statement its transactions ran is taken too: a
    transaction replayed without it is shorter than the source's."""
    point, customers = STATEMENTS[0], STATEMENTS[4]
    whole = frozenset({point.queryid, customers.queryid})
    chosen = select(STATEMENTS, CATALOG, cover=0.45, whole=whole)
    taken = [c.statement.query for c in chosen.candidates]
    assert taken == [STATEMENTS[1].query, point.query, STATEMENTS[2].query, customers.query]
    # without a capture, the cover alone decides
    alone = select(STATEMENTS, CATALOG, 0.45).candidates
    assert point.query not in [c.statement.query for c in alone]


def test_scripts_draw_each_parameter_by_its_rule_and_carry_their_tag() -> None:
    synthesis = synthesize(select(STATEMENTS[:3], CATALOG, cover=1.0), CATALOG, POOLS)
    by_name = {b.name: b for b in synthesis.blocks}
    q1, q2, q3 = (synthesis.scripts[i].text for i in range(3))
    assert [s.weight for s in synthesis.scripts] == [1000, 6000, 500]
    # text: pgbench holds numbers only, so the statement is written once per value, its
    # quotes doubled, and pgbench picks one by the value's weight: the server parses
    # one value a call, as the application's call
    assert q1.splitlines()[-6:] == [
        "\\set pgopt_v random(1, 10000)",
        "\\if :pgopt_v <= 7500",
        "select /* pgopt q01 */ count(*) from orders where status = 'new'::text;",
        "\\else",
        "select /* pgopt q01 */ count(*) from orders where status = 'it''s paid'::text;",
        "\\endif",
    ]
    assert "case when" not in q1
    # integers: uniform over the histogram, whose two even buckets are one range
    assert "\\set pgopt_p1 random(1, 1000)" in q2
    assert q2.rstrip().endswith("select /* pgopt q02 */ * from orders where id = :pgopt_p1;")
    # a new unique key: from a sequence above the data's largest
    assert "nextval('pgopt_replay.orders_id')" in q3
    assert [(k.sequence, k.start) for k in synthesis.keys] == [("pgopt_replay.orders_id", 1001)]
    assert "create sequence pgopt_replay.orders_id start with 1001;" in keys_sql(synthesis)
    assert any("no two inserts collide" in a for a in by_name["q03"].assumptions)
    readme = workload_markdown(synthesis)
    assert "q01" in readme and "How each parameter is drawn" in readme
    # the status and the id from the data's statistics, which the fidelity check says
    assert by_name["q01"].values_from_data and by_name["q02"].values_from_data


def test_a_column_without_values_skips_its_statement() -> None:
    pools = {**POOLS, ("public", "orders", "status"): pool_from_rows([])}
    synthesis = synthesize(select(STATEMENTS[:2], CATALOG, cover=1.0), CATALOG, pools)
    assert [b.statement.query for b in synthesis.blocks] == [STATEMENTS[0].query]
    assert any("no values of orders.status" in k.reason for k in synthesis.skipped)


def test_statistics_give_common_values_their_frequency_and_the_rest_to_the_histogram() -> None:
    pool = pool_from_stats("integer", ["7", "9"], [0.5, 0.2], ["10", "20", "40"], 0.1)
    assert pool.values == (("7", 0.5), ("9", 0.2))
    # the two buckets hold the same rows over different widths: not merged
    assert [(lo, hi) for lo, hi, _ in pool.ranges] == [(10, 20), (20, 40)]
    assert [w for _, _, w in pool.ranges] == pytest.approx([0.1, 0.1])
    text = pool_from_stats("text", None, None, ["a", "m", "z"], 0.0)
    assert [v for v, _ in text.values] == ["a", "m", "z"]
    assert compact([(0, 10, 0.1), (10, 20, 0.1), (20, 100, 0.1)]) == ((0, 20, 0.2), (20, 100, 0.1))


def test_the_drawn_values_follow_the_weights() -> None:
    """Evaluate the script's choice of a variant on uniform draws (seeded, exact)."""
    pool = Pool((("a", 0.6), ("b", 0.3), ("c", 0.1)), (), "pg_stats")
    synthesis = synthesize(
        select([statement("select * from orders where status = $1", 10, 1.0)], CATALOG),
        CATALOG,
        {("public", "orders", "status"): pool},
    )
    arms = re.findall(r"if :pgopt_v <= (\d+)\n.* = '(\w)'::text;", synthesis.scripts[0].text)
    assert [v for _, v in arms] == ["a", "b"]
    rng, counts = random.Random(7), {"a": 0, "b": 0, "c": 0}
    for _ in range(20_000):
        r = rng.randint(1, DRAW)
        counts[next((v for cut, v in arms if r <= int(cut)), "c")] += 1
    assert counts["a"] / 20_000 == pytest.approx(0.6, abs=0.015)
    assert counts["b"] / 20_000 == pytest.approx(0.3, abs=0.015)


def _histogram(data: list[int], buckets: int = 100) -> list[str]:
    """Equal-depth bounds, as ANALYZE makes them."""
    ordered = sorted(data)
    return [
        str(ordered[min(len(ordered) - 1, i * len(ordered) // buckets)]) for i in range(buckets + 1)
    ]


@pytest.mark.parametrize("skew", ["uniform", "skewed"])
def test_a_range_reads_the_sources_rows_per_call(skew: str) -> None:
    """Ranges drawn by the script (their low end from the histogram, their width from
    the bucket's rows per unit) read, on a column of the same distribution, the rows a
    call the source's did: within 1.5x (seeded simulation, no server)."""
    rng = random.Random(11)
    if skew == "uniform":
        data = list(range(1, 100_001))
    else:  # dense at the start, sparse after: a log-normal spread of 100k values
        data = sorted({int(rng.lognormvariate(8, 1.5)) for _ in range(150_000)})
    pool = pool_from_stats("integer", None, None, _histogram(data), 0.0, float(len(data)))
    ordered = sorted(data)
    import bisect

    for wanted in (10.0, 100.0, 1000.0):
        span = RangeDraw(pool, "integer", wanted, high=2)
        read = []
        for _ in range(2_000):
            low, high = sample(span, rng)
            read.append(bisect.bisect_right(ordered, high) - bisect.bisect_left(ordered, low))
        mean = sum(read) / len(read)
        assert wanted / 1.5 <= mean <= wanted * 1.5, (skew, wanted, mean)


def test_the_range_width_comes_from_the_sources_rows_or_its_neighbours() -> None:
    """A range that aggregates returns one row: its width comes from the source's other
    ranges of the column; a LIMIT from the rows a call returned."""
    pools = {
        ("public", "orders", "id"): pool_from_stats(
            "bigint", None, None, ["1", "1000"], 0.0, 1000.0
        )
    }
    statements = [
        statement("select status from orders where id between $1 and $2", 100, 10.0, 5000),
        statement("select sum(customer_id) from orders where id between $1 and $2", 100, 10.0, 100),
        statement("select status from orders where id > $1 limit $2", 50, 5.0, 1000),
    ]
    synthesis = synthesize(
        select(statements, CATALOG, 1.0), CATALOG, pools, everything=tuple(statements)
    )
    plain, summed, limited = synthesis.blocks
    assert "50 rows a call, as the source's calls" in plain.assumptions[0]
    assert "as the source's other ranges of orders.id returned" in summed.assumptions[0]
    assert "\\set pgopt_w1 50" in "\n".join(summed.lines)
    assert "LIMIT 20: the source's rows per call" in limited.assumptions[1]


def test_statements_become_transactions_as_the_source_committed_them() -> None:
    chosen = select(STATEMENTS[:3], CATALOG, 1.0)
    single = synthesize(chosen, CATALOG, POOLS, SourceWorkload(1.1, 4, "prepared", "sampled"))
    assert [s.name for s in single.scripts] == ["q01", "q02", "q03"]
    assert single.shape.startswith("each statement its own")
    grouped = synthesize(chosen, CATALOG, POOLS, SourceWorkload(4.2, 4, "prepared", "sampled"))
    assert grouped.shape.startswith("transactions of 4 statements")
    assert [(s.name, s.weight) for s in grouped.scripts] == [
        (f"transaction_{t:02d}", 1) for t in range(1, TRANSACTIONS + 1)
    ]
    # 6000, 1000 and 500 calls, 128 draws: 102.4, 17.07 and 8.53 of them; 102, 17 and 8
    # written out, and one draw that picks among the three by the 0.4, 0.07 and 0.53 left
    texts = "".join(s.text.split("BEGIN;\n", 1)[1] for s in grouped.scripts)
    assert texts.count("COMMIT;\n") == TRANSACTIONS
    assert texts.count("\\set pgopt_s random(1, 7500)") == 1
    drawn = Counter(re.findall(r"^-- (q\d\d):", texts, re.M))
    assert sorted(drawn.values()) == [8 + 1, 17 + 1, 102 + 1]
    assert "`pgbench -n $(printf -- '-f %s ' transaction_*.sql) ...`" in workload_markdown(grouped)


def test_each_choice_gets_exactly_its_share_of_the_transactions_draws() -> None:
    """What the whole cells leave over is picked at run time by the leftovers, so the
    draws a choice expects are its share of them exactly, however they round."""
    rng = random.Random(56)
    for _ in range(200):
        weights = [rng.randint(1, 100_000) for _ in range(rng.randint(1, 40))]
        cells = rng.randint(1, 64) * TRANSACTIONS
        whole, rest = cells_of(weights, cells)
        spare = cells - sum(whole)
        assert 0 <= spare < len(weights) and sum(rest) == spare * sum(weights)
        for w, n, r in zip(weights, whole, rest, strict=True):
            expected = n + (Fraction(spare * r, sum(rest)) if spare else 0)
            assert expected == Fraction(cells * w, sum(weights))


def test_an_operand_no_data_holds_is_drawn_from_a_stated_range() -> None:
    statements = [
        statement("update orders set customer_id = customer_id + $2 where id = $1", 10, 1.0, 10)
    ]
    pools = {("public", "orders", "id"): POOLS[("public", "orders", "id")]}
    (block,) = synthesize(select(statements, CATALOG, 1.0), CATALOG, pools).blocks
    assert "\\set pgopt_p2 random(1, 100)" in block.lines
    assert any("assumed 1 to 100" in a for a in block.assumptions)


def test_a_delete_and_an_insert_of_one_key_go_together() -> None:
    """sysbench's pattern: DELETE a row by its key, INSERT it back, in one transaction;
    their calls match, so the INSERT takes the key the DELETE drew (no new key)."""
    statements = [
        statement("delete from orders where id = $1", 500, 5.0, 500),
        statement("insert into orders (id, status) values ($1, $2)", 510, 5.0, 510),
        statement("select * from orders where id = $1", 1000, 10.0, 1000),
    ]
    work = SourceWorkload(4.0, 2, "prepared", "sampled")
    synthesis = synthesize(select(statements, CATALOG, 1.0), CATALOG, POOLS, work)
    assert synthesis.keys == ()  # the key comes back: no sequence needed
    paired = [s.text for s in synthesis.scripts if "delete /* pgopt q02 */" in s.text]
    assert paired
    for text in paired:  # the first pair of each: it draws its key, deletes, inserts it
        delete_at = text.index("delete /* pgopt q02 */ from orders where id = :pgopt_p1;")
        insert = "insert /* pgopt q03 */ into orders (id, status) values (:pgopt_key,"
        insert_at = text.index(insert)
        assert text.index("\\set pgopt_key :pgopt_p1") < delete_at < insert_at
    # a draw of the pair is two statements: 4 a commit in 3 draws (2 pairs a 3 on average)
    assert synthesis.shape.startswith("transactions of 3 statements")
    notes = "\n".join(a for b in synthesis.blocks for a in b.assumptions)
    assert "each DELETE of a key is taken to be followed by an INSERT of it" in notes


def test_a_range_whose_source_scanned_the_whole_table_has_a_width_said_to_be_a_guess() -> None:
    """Aggregates over ranges (one row a call): on the source, one read its range through
    an index (4 blocks a call: its width follows), the other scanned all 10 pages of
    the table each call, which says nothing of its ranges' width."""
    query = "select count(*) from orders where id between $1 and $2"
    scans = SourceStatement("1", query, 10, 5.0, 10, 100)
    indexed = SourceStatement("2", query.replace("count(*)", "sum(id)"), 10, 5.0, 10, 40)
    synthesis = synthesize(select([scans, indexed], CATALOG, 1.0), CATALOG, POOLS)
    by_id = {b.statement.queryid: b for b in synthesis.blocks}
    assert "is a guess" in by_id["1"].unverified
    assert any("read the whole table" in a for a in by_id["1"].assumptions)
    assert not by_id["2"].unverified
    assert any("100 rows a call, from the source's 4 blocks" in a for a in by_id["2"].assumptions)


def test_a_list_pg_stat_statements_squashed_sends_as_many_values_as_the_rows_call_for() -> None:
    """PostgreSQL 18 keeps `id IN ($1 /*, ... */)`, not the list's length: the replay
    sends as many values as make a call read the source's rows (ids: one row each)."""
    squashed = statement("select * from orders where id in ($1 /*, ... */)", 100, 50.0, 1000)
    synthesis = synthesize(select([squashed], CATALOG, cover=1.0), CATALOG, POOLS)
    (script,) = synthesis.scripts
    last = script.text.rstrip().splitlines()[-1]
    assert last.startswith("select /* pgopt q01 */ * from orders where id in (:pgopt_p1, ")
    assert "/*, ... */" not in last
    assert last.count(":pgopt_p1") == 10  # 10 rows a call, one row an id
    assert "\\set pgopt_p1_10 " in script.text and "\\set pgopt_r1_10 " in script.text
    assert "a list pg_stat_statements squashed: 10 values a call" in script.text


def test_a_value_compared_with_a_function_of_a_column_is_sent_through_it() -> None:
    """`lower(status) = $1`: a value of the column, passed through the same function,
    so a call finds the rows the source's calls found."""
    applied = statement("select count(*) from orders where lower(status) = $1", 100, 50.0, 100)
    chosen = select([applied], CATALOG, cover=1.0)
    assert not chosen.skipped, chosen.skipped
    (script,) = synthesize(chosen, CATALOG, POOLS).scripts
    first = script.text.splitlines()[-4]
    assert first.endswith("where lower(status) = lower('new'::text);"), first


def test_updates_and_deletes_find_their_rows_by_the_keys_written_during_the_watch() -> None:
    """A watch of prepared statements sees no values: an UPDATE's or a DELETE's key is
    drawn from the rows written during the watch (their xmin, source/written.py), the
    reads and the written values from the data's statistics as before."""
    statements = [
        statement("update orders set status = $1 where id = $2", 800, 40.0, 800),
        statement("delete from orders where customer_id = $1", 100, 5.0, 100),
        statement("select * from orders where id = $1", 1000, 10.0, 1000),
    ]
    chosen = select(statements, CATALOG, 1.0)
    assert written_wanted(chosen, CATALOG) == {
        ("public", "orders", "id"),
        ("public", "orders", "customer_id"),
    }
    hot = [str(k) for k in range(500, 510)] * 3 + ["7", "950"]  # each key once, in the read
    origin = "the keys of the 32 rows written during the watch"
    written = {
        ("public", "orders", "id"): replace(pool_from_values(hot, "bigint"), origin=origin),
        ("public", "orders", "customer_id"): replace(
            pool_from_values(["3"] * 20, "integer"), origin=origin
        ),
    }
    pools = {**POOLS, ("public", "orders", "customer_id"): pool_from_rows(["1", "2"])}
    synthesis = synthesize(chosen, CATALOG, pools, written=written)
    by_query = {b.statement.query.split()[0]: b for b in synthesis.blocks}
    update, delete, read = by_query["update"], by_query["delete"], by_query["select"]
    assert any(origin in a for a in update.assumptions if a.startswith("orders.id"))
    assert any(origin in a for a in delete.assumptions)
    assert not any(origin in a for a in read.assumptions)
    # which rows the writes find is the clients' (the status written is work by its size)
    assert not update.values_from_data and not delete.values_from_data
    assert read.values_from_data
    text = next(s.text for s in synthesis.scripts if "update /* pgopt" in s.text)
    assert "random(1, 1000)" not in text  # not the table's spread of keys
    assert "UPDATEs and DELETEs find their rows, from the rows written during the watch" in (
        synthesis.workload.values_from
    )
    # without a watch's written keys, as before: the data's statistics
    before = synthesize(chosen, CATALOG, pools)
    assert all(b.values_from_data for b in before.blocks)
    assert "rows written" not in before.workload.values_from
    # a table whose written keys could not be read: said where the values come from
    unread = synthesize(chosen, CATALOG, pools, unread={"public.orders": "statement timeout"})
    assert all(b.values_from_data for b in unread.blocks)
    assert (
        "the keys written to public.orders during the watch were not read (statement "
        "timeout): its UPDATEs and DELETEs draw theirs from the statistics"
    ) in unread.workload.values_from
