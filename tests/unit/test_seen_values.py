"""The values a watch sees its clients send (source/seen.py, pure): calls sent with
literals matched to pg_stat_statements by fingerprint, kept from MIN_CALLS calls of a
statement, drawn by the replay in place of the data's statistics; prepared clients
and too few calls leave the statistics, and the workload says which."""

from __future__ import annotations

import random
import re

from pgopt.replay.selection import select
from pgopt.replay.synthesize import synthesize
from pgopt.replay.values.draws import RangeDraw, pool_from_values, sample
from pgopt.source.catalog import SourceStatement, SourceWorkload
from pgopt.source.seen import MIN_CALLS, seen_values
from tests.unit.test_ab_synthesis import CATALOG, POOLS

STATEMENTS = [
    SourceStatement("1", "select * from orders where id = $1", 100, 10.0, 100),
    SourceStatement("2", "select status from orders where id between $1 and $2", 100, 10.0, 100),
]


def _hot_texts(rng: random.Random, calls: int) -> list[str]:
    """Point reads on ids 900-909 (the rows the clients ask for), ranges of 5 rows
    from 950, and statements that match nothing or carry no literal."""
    texts = [f"SELECT * FROM orders WHERE id = {rng.randint(900, 909)}" for _ in range(calls)]
    texts += [
        f"select status from orders where id between {950 + i} and {954 + i}" for i in range(3)
    ]
    texts += ["select * from customers where id = 3", "select * from orders where id = $1"]
    return texts


def test_calls_with_literals_give_each_statement_its_values() -> None:
    seen = seen_values(_hot_texts(random.Random(7), MIN_CALLS), STATEMENTS)
    assert seen.calls == MIN_CALLS + 5
    assert seen.matched == MIN_CALLS + 3 + 1  # the $1 text fingerprints as the statement too
    # the ranges were seen 3 times: fewer than MIN_CALLS, left to the statistics
    assert set(seen.values) == {"1"}
    values = [v for c in seen.values["1"] if (v := c.get(1)) is not None]
    assert len(values) == MIN_CALLS and all(900 <= int(v) <= 909 for v in values)
    assert f"{MIN_CALLS} times or more" in seen.note


def test_the_replay_draws_the_keys_the_watch_saw() -> None:
    """The statistics spread the keys over the table's ids; the watch's calls put
    every draw among the ten rows the clients asked for."""
    selection = select(STATEMENTS, CATALOG, 1.0)
    workload = SourceWorkload(1.0, 2, "simple", "watched")
    seen = seen_values(_hot_texts(random.Random(7), 200), STATEMENTS)
    synthesis = synthesize(selection, CATALOG, POOLS, workload, seen=seen)
    (point,) = [b for b in synthesis.blocks if b.statement.queryid == "1"]
    assert point.assumptions == ("from the watch (200 calls, 10 values)",)
    (drawn,) = [line for line in point.lines if line.startswith("\\set pgopt_p1")]
    keys = {int(k) for k in re.findall(r"then (\d+)|else (\d+)", drawn) for k in k if k}
    assert keys == set(range(900, 910))
    assert "the watch's look at the calls" in synthesis.workload.values_from
    plain = synthesize(selection, CATALOG, POOLS, workload)
    (unseen,) = [b for b in plain.blocks if b.statement.queryid == "1"]
    assert unseen.assumptions == ("orders.id (bigint), from pg_stats",)
    assert "\\set pgopt_p1 random(1, 1000)" in unseen.lines
    assert plain.workload.values_from.startswith("the data's statistics")


def test_prepared_clients_leave_the_values_to_the_statistics_and_say_why() -> None:
    selection = select(STATEMENTS, CATALOG, 1.0)
    prepared = SourceWorkload(1.0, 4, "prepared", "watched")
    synthesis = synthesize(selection, CATALOG, POOLS, prepared, seen=seen_values([], STATEMENTS))
    assert "prepared statements, whose values a watch cannot see" in synthesis.workload.values_from
    assert "--source-log" in synthesis.workload.values_from


def test_a_value_seen_a_few_times_in_a_small_sample_is_not_hot() -> None:
    """Four calls of forty on one key is what a spread of keys gives by chance: the
    key stays one of the ranges, not a tenth of every draw; from five it is hot."""
    values = [str(v) for v in range(100, 137) if v != 120] + ["120"] * 4
    pool = pool_from_values(values, "integer", "the watch")
    assert pool.values == () and pool.origin.startswith("the watch (40 calls")
    hot = pool_from_values([*values, "120"], "integer")
    assert hot.values == (("120", 5 / 41),)
    span = RangeDraw(pool, "integer", 0.0, 2, width=1)
    lows = [int(low) for low, _ in (sample(span, random.Random(i)) for i in range(200))]
    assert min(lows) >= 100 and max(lows) <= 136
