"""Text values chosen by pgbench (replay/values/variants.py, pure): one statement a value,
picked at its weight; more values than VARIANTS, drawn; a captured call's values
together; and what pgbench runs holds one literal per parameter, no CASE."""

from __future__ import annotations

from collections import Counter

from pgopt.replay.values.draws import ArrayOf, FromCalls, FromPool, Pool
from pgopt.replay.values.variants import VARIANTS, chosen_by, is_text, variants


def test_integers_stay_with_pgbench_and_text_is_written_out() -> None:
    numbers = FromPool(Pool((("1", 1.0),), (), "pg_stats"), "integer")
    words = FromPool(Pool((("a", 1.0),), (), "pg_stats"), "text")
    assert not is_text(numbers) and is_text(words)
    assert is_text(ArrayOf(words, 3)) and not is_text(ArrayOf(numbers, 3))
    assert is_text(FromCalls(("1",), 1))
    assert variants("q01", {1: numbers}, {}) == []


def test_a_few_values_each_get_a_statement_at_their_weight() -> None:
    status = FromPool(Pool((("new", 0.75), ("it's paid", 0.25)), (), "pg_stats"), "text")
    assert variants("q01", {1: status}, {}) == [
        (0.75, {1: "'new'::text"}),
        (0.25, {1: "'it''s paid'::text"}),
    ]


def test_many_values_are_drawn_by_their_weights_with_a_seed() -> None:
    """One value of half the weight, 49 rare ones: about half the variants hold it."""
    values = (("hot", 0.5), *((f"v{i}", 0.5 / 49) for i in range(49)))
    pool = FromPool(Pool(values, (), "pg_stats"), "text")
    drawn = variants("q07", {2: pool}, {})
    assert len(drawn) == VARIANTS and drawn == variants("q07", {2: pool}, {})
    counts = Counter(chosen[2] for _, chosen in drawn)
    assert 10 <= counts["'hot'::text"] <= 22  # 16 expected; binomial(32, 0.5) within 2.1 sd
    lists = variants("q07", {2: pool}, {2: 3})  # a squashed list of three values a call
    assert all(chosen[2].count("::text") == 3 for _, chosen in lists)


def test_a_captured_calls_values_go_together() -> None:
    calls = {1: FromCalls(("{1,2}", "{3}"), 1), 2: FromCalls(("{5,6}", None), 1)}
    assert variants("q02", calls, {}) == [
        (1.0, {1: "'{1,2}'", 2: "'{5,6}'"}),
        (1.0, {1: "'{3}'", 2: "NULL"}),
    ]


def test_pgbench_picks_one_statement_and_a_weight_that_rounds_away_gets_none() -> None:
    lines = chosen_by("pgopt_v", [(0.5, "select 'a';"), (0.0, "select 'b';"), (0.5, "select 'c';")])
    assert lines == [
        "\\set pgopt_v random(1, 10000)",
        "\\if :pgopt_v <= 5000",
        "select 'a';",
        "\\else",
        "select 'c';",
        "\\endif",
    ]
    assert chosen_by("pgopt_v", [(1.0, "select 1;")]) == ["select 1;"]
