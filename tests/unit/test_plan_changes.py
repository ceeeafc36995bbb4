"""Plans as evidence: which statements changed plan between a step and the step it
derives from, and how every report shows them.

On stored EXPLAIN JSON (tests/data/plans/orders.json: generic plans from PostgreSQL
18 before and after an index on orders(customer_id)) and on a stored A/B whose B
adds that index (tests/data/results/ab-index: `pgopt ab examples/orders --duration 2`).
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from pgopt.analysis.plan_changes import compare_plans, lab_plan_changes
from pgopt.engine.plan_capture import MAX_PLANS, statements_to_explain
from pgopt.markup import md_code as code
from pgopt.model.codec import decode, encode
from pgopt.model.plans import StatementPlan
from pgopt.model.result import LabResult
from pgopt.plans.shape import change_summary
from pgopt.report.html import render_html
from pgopt.report.markdown import render_markdown
from pgopt.report.plan_blocks import summary_lines
from pgopt.report.terminal import print_summary

DATA = Path(__file__).parent.parent / "data"
PLANS: dict[str, dict[str, Any]] = json.loads((DATA / "plans" / "orders.json").read_text())
BY_CUSTOMER, JOIN, UPDATE = list(PLANS["before"])
HOSTILE = "<script>alert('x')</script> | `tick` ```"


def stored(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / "results" / name / "result.json").read_text())
    return document


def ab_with(a: list[StatementPlan], b: list[StatementPlan]) -> LabResult:
    """The stored A/B with these plans for A and B."""
    result = decode(stored("ab-index"))
    a_step, b_step = result.steps
    steps = (replace(a_step, plans=tuple(a)), replace(b_step, plans=tuple(b)))
    return replace(result, steps=steps)


def recorded(when: str, *queries: str) -> list[StatementPlan]:
    return [StatementPlan.of(q, PLANS[when][q]) for q in queries]


def test_an_index_changes_the_plans_that_scan_its_table_and_names_the_index() -> None:
    result = ab_with(
        recorded("before", BY_CUSTOMER, JOIN, UPDATE),
        recorded("after", UPDATE, JOIN, BY_CUSTOMER),
    )
    comparison = compare_plans(result.steps[1], result.steps[0])
    assert (comparison.step, comparison.parent) == ("b", "a")
    assert [c.query for c in comparison.changed] == [JOIN, BY_CUSTOMER]  # in B's order
    assert comparison.kept == 1  # the update by primary key
    by_customer = comparison.changed[1]
    assert by_customer.summary == (
        "Seq Scan on public.orders → Bitmap Heap Scan on public.orders; "
        "Bitmap Index Scan using orders_customer"
    )
    assert by_customer.before.indexes == () and by_customer.after.indexes == ("orders_customer",)
    assert by_customer.after.total_cost is not None and by_customer.before.total_cost is not None
    assert by_customer.after.total_cost < by_customer.before.total_cost


def test_a_plan_whose_scans_stay_says_which_node_changed() -> None:
    before = PLANS["before"][BY_CUSTOMER]
    after = copy.deepcopy(before)
    after["Strategy"], after["Node Type"] = "Hashed", "Aggregate"
    assert change_summary(before, after) == "Aggregate → HashAggregate"
    assert change_summary(before, copy.deepcopy(before)) is None


def test_a_statement_explained_in_one_step_only_is_neither_changed_nor_kept() -> None:
    unexplained = StatementPlan(BY_CUSTOMER, error='relation "orders" does not exist')
    result = ab_with(
        [unexplained, *recorded("before", UPDATE)],
        [*recorded("after", BY_CUSTOMER, UPDATE, JOIN)],
    )
    comparison = compare_plans(result.steps[1], result.steps[0])
    assert comparison.changed == () and comparison.kept == 1


def test_steps_without_plans_are_not_compared_and_the_reports_say_nothing() -> None:
    older = decode(stored("smoke-c"))  # written before plans were recorded
    assert all(s.plans is None for s in older.steps)
    assert lab_plan_changes(older) == [] and summary_lines(older) == []
    assert "## Plans" not in render_markdown(older)
    kept_only = ab_with(recorded("before", UPDATE), recorded("after", UPDATE))
    assert summary_lines(kept_only) == ["1 statement kept its plan (b vs a)"]
    assert "**b** against **a**: 1 statement kept its plan" in render_markdown(kept_only)


def test_the_stored_ab_records_both_plans_and_its_summary_names_the_change() -> None:
    result = decode(stored("ab-index"))
    a, b = result.steps
    assert a.plans and b.plans and a.plans[0].query == b.plans[0].query
    assert a.plans[0].indexes == () and b.plans[0].indexes == ("orders_customer_id",)
    [line] = summary_lines(result)
    assert line.startswith("b vs a: select count(*), sum(amount) from orders where customer_id")
    assert line.endswith(
        "Seq Scan on public.orders → Bitmap Heap Scan on public.orders; "
        "Bitmap Index Scan using orders_customer_id"
    )
    console = Console(width=200, record=True, color_system=None)
    print_summary(console, result)
    assert line in console.export_text()


def test_report_md_shows_the_two_plans_one_after_the_other_under_their_steps() -> None:
    md = render_markdown(decode(stored("ab-index")))
    plans = md[md.index("## Plans") :]
    assert "**b** against **a**: 1 statement changed plan" in plans
    a_at, b_at = plans.index("**a (cost "), plans.index("**b (cost ")
    assert a_at < b_at
    assert "```text\nAggregate  (cost=" in plans
    assert "-> Seq Scan on public.orders" in plans[a_at:b_at]
    assert "-> Bitmap Index Scan using orders_customer_id" in plans[b_at:]


def test_report_html_puts_the_plans_in_two_columns_and_escapes_them() -> None:
    html = render_html(decode(stored("ab-index")))
    assert '<div class="side-by-side"><div><h4>a (cost ' in html
    assert "-&gt; Seq Scan on public.orders" in html
    hostile = copy.deepcopy(PLANS["after"][BY_CUSTOMER])
    hostile["Plans"][0]["Relation Name"] = HOSTILE
    query = f"select 1 from {HOSTILE}"
    result = ab_with(
        [StatementPlan.of(query, PLANS["before"][BY_CUSTOMER])],
        [StatementPlan.of(query, hostile)],
    )
    page = render_html(result)
    assert "<script>" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)" in page
    md = render_markdown(result)
    plans = md[md.index("## Plans") :]
    assert code(" ".join(query.split())) in plans  # a code span: shown, not markup
    assert "public.&lt;script&gt;alert('x')&lt;/script&gt; \\| \\`tick\\`" in plans  # summary
    assert "````text" in plans  # a fence longer than the plan's own backticks


def test_a_result_with_plans_validates_and_is_written_back_exactly_as_read() -> None:
    document = stored("ab-index")
    assert json.loads(json.dumps(encode(decode(document)))) == document


def test_the_statements_explained_are_the_workloads_heaviest_not_pgopts_own() -> None:
    rows = [
        {"query": "BEGIN", "total_ms": 900.0},
        {"query": "select bucket, count(*) from pg_stat_activity group by 1", "total_ms": 800.0},
        {"query": "select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1)", "total_ms": 700.0},
        {"query": "select n from pg_catalog.pg_class where relname = $1", "total_ms": 600.0},
        *({"query": f"select * from t{i} where id = $1", "total_ms": float(i)} for i in range(12)),
        {"query": "/* pgopt q01 */ update t set v = $1 where id = $2", "total_ms": 50.0},
    ]
    chosen = statements_to_explain({"statements": rows})
    assert len(chosen) == MAX_PLANS
    assert (
        chosen[0].startswith("/* pgopt q01 */") and chosen[1] == "select * from t11 where id = $1"
    )
    assert not any(q == "BEGIN" or "pg_" in q for q in chosen)  # pgopt's and pgbench's own
    assert statements_to_explain({}) == []  # no pg_stat_statements: nothing to explain
