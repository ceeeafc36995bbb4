"""What an ORM sends, replayed without a server: Django's case-insensitive lookup
(`UPPER(col::text) = UPPER($1)`), `bulk_create`'s `INSERT ... SELECT * FROM
UNNEST($1::int4[], ...)`, `= ANY($1)`, and, from a log capture, a parameter no column
holds, sent as a captured call had it. The statements are Django 5.2's own text, as
PostgreSQL 18's pg_stat_statements kept it."""

from __future__ import annotations

import random
import re

from pgopt.queries import is_own, load
from pgopt.replay.param_binding import ColumnUse
from pgopt.replay.replayable import shape_of
from pgopt.replay.selection import select
from pgopt.replay.synthesize import synthesize
from pgopt.replay.values.draws import ArrayOf, FromPool, pool_from_stats, sample
from pgopt.replay.values.variants import VARIANTS
from pgopt.source.capture import Capture
from pgopt.source.catalog import Catalog, Column, SourceStatement, Table
from pgopt.source.reader import foreign_key_check

CUSTOMER, LINE = Table(None, "shopapp_customer"), Table(None, "shopapp_orderline")
CATALOG = Catalog(
    tables={
        ("public", "shopapp_customer"): {
            "id": Column(1, "bigint", True, largest="20000"),
            "email": Column(2, "character varying(254)", True),
            "name": Column(3, "character varying(100)", False),
        },
        ("public", "shopapp_orderline"): {
            "id": Column(1, "bigint", True, largest="150000"),
            "order_id": Column(2, "bigint", False),
            "product_id": Column(3, "bigint", False),
            "quantity": Column(4, "smallint", False),
            "price": Column(5, "numeric(10,2)", False),
        },
    },
    visible={"shopapp_customer": "public", "shopapp_orderline": "public"},
    sizes={("public", "shopapp_customer"): (20000.0, 200.0)},
)
LOOKUP = (
    'SELECT "shopapp_customer"."id", "shopapp_customer"."email", "shopapp_customer"."name" '
    'FROM "shopapp_customer" WHERE UPPER("shopapp_customer"."email"::text) = UPPER($1) LIMIT $2'
)
BULK = (
    'INSERT INTO "shopapp_orderline" ("order_id", "product_id", "quantity", "price") '
    "SELECT * FROM UNNEST(($1::int4[])::bigint[], ($2::int2[])::bigint[], "
    "($3::int2[])::smallint[], ($4::numeric[])::numeric[]) "
    'RETURNING "shopapp_orderline"."id"'
)
ANY = 'SELECT "shopapp_customer"."name" FROM "shopapp_customer" WHERE "id" = ANY($1)'
POOLS = {
    ("public", "shopapp_customer", "email"): pool_from_stats(
        "character varying(254)", None, None, ["a@x.org", "m@x.org", "z@x.org"], 0.0, 20000.0
    ),
    ("public", "shopapp_customer", "id"): pool_from_stats(
        "bigint", None, None, ["1", "10000", "20000"], 0.0, 20000.0
    ),
    **{
        ("public", "shopapp_orderline", name): pool_from_stats(
            kind, None, None, bounds, 0.0, 150000.0
        )
        for name, kind, bounds in (
            ("order_id", "bigint", ["1", "50000"]),
            ("product_id", "bigint", ["1", "2000"]),
            ("quantity", "smallint", ["1", "5"]),
            ("price", "numeric(10,2)", ["1.00", "9.99", "99.00"]),
        )
    },
}


def statement(query: str, calls: int, rows: int) -> SourceStatement:
    return SourceStatement(str(abs(hash(query))), query, calls, calls * 0.5, rows, calls * 4)


def shape(query: str):  # type: ignore[no-untyped-def]
    return shape_of(query, CATALOG.column_names)


def test_the_same_function_on_both_sides_sends_a_value_of_the_column() -> None:
    s = shape(LOOKUP)
    assert s.refusal is None
    assert s.params == {1: ColumnUse(CUSTOMER, "email"), 2: "limit"}
    (script,) = synthesize(select([statement(LOOKUP, 100, 100)], CATALOG), CATALOG, POOLS).scripts
    # the value itself, as a value of email: UPPER() of it matches UPPER() of the row's
    sent = [line for line in script.text.splitlines() if line.startswith("SELECT")]
    assert any("= UPPER('m@x.org'::character varying(254)) LIMIT 1;" in line for line in sent)
    assert "case when" not in script.text


def test_an_orms_bulk_insert_sends_arrays_of_one_length_as_the_source_wrote_rows() -> None:
    s = shape(BULK)
    assert s.refusal is None and s.kind == "insert"
    assert s.params == {
        n: ColumnUse(LINE, column, written=True, array=True)
        for n, column in enumerate(("order_id", "product_id", "quantity", "price"), 1)
    }
    bulk = statement(BULK, 200, 600)  # three lines an order
    synthesis = synthesize(select([bulk], CATALOG), CATALOG, POOLS)
    (script,) = synthesis.scripts
    sent = [line for line in script.text.splitlines() if line.startswith("INSERT")]
    assert len(sent) == VARIANTS  # prices are not numbers pgbench holds: written out
    last = sent[-1]
    arrays = re.findall(r"ARRAY\[([^\]]*)\]", last)
    assert len(arrays) == 4, last
    assert [len(a.split(", :")) for a in arrays[:3]] == [3, 3, 3]
    assert last.count("::numeric(10,2)") == 3  # each price drawn in the column's type
    assert "UNNEST((ARRAY[:pgopt_p1_1, :pgopt_p1_2, :pgopt_p1_3]::int4[])::bigint[]" in last
    (notes,) = [b.assumptions for b in synthesis.blocks]
    assert any("an array of shopapp_orderline.order_id" in n and "wrote 3 rows" in n for n in notes)


def test_any_of_an_array_holds_as_many_values_as_make_the_sources_rows() -> None:
    assert shape(ANY).params == {1: ColumnUse(CUSTOMER, "id", array=True)}
    synthesis = synthesize(select([statement(ANY, 100, 500)], CATALOG), CATALOG, POOLS)
    (block,) = synthesis.blocks
    last = block.lines[-1]
    assert last.count(":pgopt_p1_") == 5, last  # ids are unique: five rows, five ids
    draw = ArrayOf(FromPool(POOLS[("public", "shopapp_customer", "id")], "bigint"), 5)
    values, _ = sample(draw, random.Random(1))
    assert len(values) == 5 and all(1 <= v <= 20000 for v in values)


def test_a_parameter_no_column_holds_is_sent_as_a_captured_call_had_it() -> None:
    """`SELECT ... WHERE md5(name) = $1`-like shapes no rule binds: from
    pg_stat_statements alone they are refused; a log capture's calls give them, and the
    arrays of one call go together (an UNNEST of arrays of different lengths would
    insert NULLs)."""
    odd = 'SELECT "name" FROM "shopapp_customer" WHERE length("name") > $1::int + 0'
    assert shape(odd).unbound == (1,)
    odd_st, bulk = statement(odd, 50, 50), statement(BULK, 200, 600)
    assert "is not compared" in select([odd_st], CATALOG).skipped[0].reason
    capture = Capture(
        values={
            odd_st.queryid: [{1: "3"}, {1: "7"}],
            bulk.queryid: [
                {1: "{1,2}", 2: "{5,6}", 3: "{1,1}", 4: "{9.99,1.00}"},
                {1: "{3}", 2: "{7}", 3: "{2}", 4: "{99.00}"},
            ],
        }
    )
    chosen = select([odd_st, bulk], CATALOG, captured=frozenset(capture.values))
    assert not chosen.skipped
    synthesis = synthesize(chosen, CATALOG, POOLS, capture=capture)
    text = {b.statement.queryid: "\n".join(b.lines) for b in synthesis.blocks}
    odd_text = text[odd_st.queryid]
    assert "> '3'::int + 0;" in odd_text and "> '7'::int + 0;" in odd_text
    bulk_text = text[bulk.queryid]
    # one call a variant: its arrays together
    assert bulk_text.count("\\set pgopt_v random(1, 10000)") == 1
    first, second = [line for line in bulk_text.splitlines() if line.startswith("INSERT")]
    assert "'{1,2}'::int4[]" in first and "'{5,6}'::int2[]" in first and "'{7}'" not in first
    assert "'{3}'::int4[]" in second and "'{7}'::int2[]" in second


def test_postgresqls_own_foreign_key_checks_are_no_clients_statements() -> None:
    """A deferred foreign key (Django's) is checked at COMMIT, and pg_stat_statements
    counts the check as a top-level statement; pgopt's own reads of the source are
    not the source's workload either."""
    check = (
        'SELECT $2 FROM ONLY "public"."shopapp_customer" x WHERE "id" '
        "OPERATOR(pg_catalog.=) $1 FOR KEY SHARE OF x"
    )
    assert foreign_key_check(check)
    assert not foreign_key_check('SELECT 1 FROM ONLY "public"."t" x WHERE "id" = $1 FOR UPDATE')
    assert not foreign_key_check(LOOKUP)
    own = load("statements_available")
    assert is_own(own) and not is_own(LOOKUP)
