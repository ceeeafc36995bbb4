"""The copy check's work and the set chosen at scale (pure): a candidate is planned
again only for the statements that constrain its leading column, a covering variant
is not built when its plain index already serves, and a hundred statements each
served by an index of its own get a hundred indexes."""

from pgopt.indexes.candidates import Candidate, ColumnStats, TableFacts
from pgopt.indexes.check_work import plan_work, served_by_plain
from pgopt.indexes.scans import Key, Scan
from pgopt.indexes.selection import Checked, choose, weigh
from pgopt.indexes.workload import Statement

WIDE = TableFacts(
    "public.wide",
    rows=200_000,
    pages=11_000,
    columns={f"c{k}": ColumnStats(4, 1000) for k in range(1, 101)} | {"id": ColumnStats(4, -1)},
)


def key(column: str) -> Key:
    return Key(column, (column,))


def scan(column: str) -> Scan:
    return Scan("public", "wide", "seq scan", 200.0, equality=[key(column)])


def test_each_candidate_is_planned_again_only_where_its_leading_column_is_read() -> None:
    scans = {f"q{k}": [scan(f"c{k}")] for k in range(1, 101)}
    candidates = [Candidate("public.wide", (key(f"c{k}"),), ("id",)) for k in range(1, 101)]
    candidates += [Candidate("public.wide", (key(f"c{k}"),)) for k in range(1, 101)]
    work = plan_work(candidates, scans, {"public.wide": 90_000_000})
    assert work.replan_count == 200  # not 200 × 100
    assert work.replans[Candidate("public.wide", (key("c7"),))] == ("q7",)
    # the plain indexes are checked before their covering variants
    assert not any(c.include for c in list(work.replans)[:100])
    assert 10 < work.estimate_s < 300
    # a second key is no way in: (c1, c2) is not searched by c2
    two = Candidate("public.wide", (key("c1"), key("c2")))
    assert plan_work([two], scans, {}).replans[two] == ("q1",)


def test_a_covering_variant_is_not_built_where_its_plain_index_serves() -> None:
    plain = Candidate("public.wide", (key("c1"),))
    cover = Candidate("public.wide", (key("c1"),), ("id",))
    served = Checked(plain, "wide_c1_idx", 4_000_000, 0.2, {"q1": 50.0})
    assert served_by_plain(cover, ("q1",), [served], {"q1": 8000.0}) == "wide_c1_idx"
    # 40% off only: the variant may do better (an index-only scan), so it is built
    halfway = Checked(plain, "wide_c1_idx", 4_000_000, 0.2, {"q1": 4800.0})
    assert served_by_plain(cover, ("q1",), [halfway], {"q1": 8000.0}) is None
    assert served_by_plain(plain, ("q1",), [served], {"q1": 8000.0}) is None


def test_a_hundred_statements_get_an_index_each() -> None:
    statements = [Statement(f"q{k}", f"select * from wide where c{k} = $1", 1, 1.0) for k in
                  range(1, 101)]  # fmt: skip
    base = {s.id: 8000.0 for s in statements}
    checked = [
        Checked(Candidate("public.wide", (key(f"c{k}"),)), f"i{k}", 4_000_000, 0.2,
                {f"q{k}": 400.0})
        for k in range(1, 101)
    ]  # fmt: skip
    weighed = [weigh(c, statements, base, {}, {"public.wide": WIDE}) for c in checked]
    choice = choose(weighed, 100.0)
    assert len(choice.chosen) == 100 and not choice.rejected


def test_one_index_serving_many_statements_over_a_composite_each() -> None:
    """Ten statements on `a` and one other column each: `a` alone takes 95% off each,
    each composite 99% off its own; one index, not eleven."""
    statements = [Statement(f"q{k}", "select", 1, 1.0) for k in range(10)]
    base = {s.id: 1000.0 for s in statements}
    single = Checked(Candidate("public.wide", (key("c1"),)), "a", 4_000_000, 0.2,
                     {s.id: 50.0 for s in statements})  # fmt: skip
    composites = [
        Checked(Candidate("public.wide", (key("c1"), key(f"c{k + 2}"))), f"a_{k}", 5_000_000,
                0.2, {f"q{k}": 10.0})
        for k in range(10)
    ]  # fmt: skip
    weighed = [weigh(c, statements, base, {}, {"public.wide": WIDE}) for c in [single, *composites]]
    choice = choose(weighed, 10.0)
    assert [w.checked.name for w in choice.chosen] == ["a"]
    why = dict((w.checked.name, reason) for w, reason in choice.rejected)
    assert why["a_3"] == "its statements are served as well by a"


def test_a_small_index_that_only_helps_is_cut_one_that_serves_is_not() -> None:
    """pganalyze_lint's cut still drops the index taking 55% off 5% of the time; the
    one taking 95% off 1% of it stays: it serves its statement."""
    statements = [Statement("big", "s", 1, 94.0), Statement("weak", "s", 1, 5.0),
                  Statement("tiny", "s", 1, 1.0)]  # fmt: skip
    base = {"big": 1000.0, "weak": 1000.0, "tiny": 1000.0}
    checked = [
        Checked(Candidate("public.wide", (key("c1"),)), "big_i", 4_000_000, 0.2, {"big": 10.0}),
        Checked(Candidate("public.wide", (key("c2"),)), "weak_i", 4_000_000, 0.2, {"weak": 450.0}),
        Checked(Candidate("public.wide", (key("c3"),)), "tiny_i", 4_000_000, 0.2, {"tiny": 50.0}),
    ]
    weighed = [weigh(c, statements, base, {}, {"public.wide": WIDE}) for c in checked]
    choice = choose(weighed, 100.0)
    assert sorted(w.checked.name for w in choice.chosen) == ["big_i", "tiny_i"]
    assert choice.rejected[0][1] == "the set without it saves within 10% of the set with it"
