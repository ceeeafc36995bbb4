"""advise without a server, #47's additions: the hot-rows rule (row-lock waits
sampled, summarized per table and statement), the statements commit-bound names,
the right reason when pg_stats shows nothing, young statistics shown with their
caveat, and a terminal that says what was not checked and where time went."""

import io
from collections import Counter
from typing import Any

from rich.console import Console

from pgopt.advise.advice import advice_document, advise
from pgopt.advise.behind import commit_kind, committing
from pgopt.advise.findings import Readings, apply, unmet_need
from pgopt.advise.report import advice_report
from pgopt.advise.row_locks import QUERY, summarize, table_of
from pgopt.advise.rules import all_rules
from pgopt.report.terminal import print_document_summary

from .test_advise import evidence

RULES = {r.id: r for r in all_rules()}
BRANCH = "UPDATE pgbench_branches SET bbalance = bbalance + 17 WHERE bid = 1"
TELLER = "UPDATE pgbench_tellers SET tbalance = tbalance + -5 WHERE tid = 3"
TELLER_NORMALIZED = "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2"
HEAD = "select id from jobs order by id limit 1 for update"


def waiter(
    query: str, table: str | None, event: str = "transactionid", **more: Any
) -> dict[str, Any]:
    return {
        "pid": 1,
        "wait_event": event,
        "query": query,
        "table": table,
        "written": more.get("written", []),
        "blockers": 1,
        "blocking_query": more.get("blocking", BRANCH),
    }


def test_row_lock_waits_are_summarized_per_table_and_statement() -> None:
    """Constants normalized away (the same UPDATE with other values is one statement);
    a wait on a transaction without a tuple lock is put on the table its statement
    changes, as its transaction's locks qualify it."""
    other = BRANCH.replace("17", "-3")
    no_tuple_lock = waiter(
        other, None, written=["public.pgbench_tellers", "public.pgbench_branches"]
    )
    samples = [
        [waiter(BRANCH, "public.pgbench_branches"), no_tuple_lock, waiter(TELLER, None)],
        [waiter(BRANCH, "public.pgbench_branches", "tuple")],
        [],
    ]
    rows = summarize(samples)
    assert [(r["table"], r["query"], r["waiting_samples"]) for r in rows] == [
        (
            "public.pgbench_branches",
            "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2",
            3,
        ),
        (
            "pgbench_tellers",
            "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2",
            1,
        ),
    ]
    branches = rows[0]
    assert branches["share"] == 3 / 4 and branches["sessions_max"] == 2
    assert branches["sessions_mean"] == 1.5 and branches["samples"] == 3
    assert branches["wait_events"] == "transactionid 67%, tuple 33%"
    assert table_of(waiter("select 1", None)) == "?"
    # a blocker that had moved on when its session was read is named only if no other was
    seen = summarize([[waiter(TELLER, "t", blocking=None)] * 3, [waiter(TELLER, "t")]])
    assert seen[0]["blocking_query"].startswith("UPDATE pgbench_branches")
    unseen = summarize([[waiter(TELLER, "t", blocking=None)]])
    assert unseen[0]["blocking_query"] == "?"
    assert (
        table_of(waiter('update "Odd"."T" set a = 1', None, written=['"Odd"."T"'])) == '"Odd"."T"'
    )


def test_hot_rows_need_the_waits_and_leave_for_update_queues_to_lock_queue() -> None:
    rule = RULES["hot-rows"]
    assert rule.sampled and rule.query == QUERY and rule.proof.not_testable
    rows = summarize([[waiter(BRANCH, "public.b"), waiter(HEAD, "public.jobs")]] * 4)
    waits = Counter({"Lock:transactionid": 50, "CPU": 30, "IdleInTransaction": 400})
    (found,) = apply(rule, rows, rows, evidence(waits=waits))
    assert "waits for a row of public.b (50% of the waits sampled" in found.message
    assert found.message.startswith("62% of active time waits on row locks")
    assert "SKIP LOCKED" in found.fix and "split" in found.fix
    waiting, holding = found.statements
    assert waiting["query"].startswith("UPDATE pgbench_branches")
    assert waiting["said"].endswith("1.0 sessions at once on average, 1 at most")
    assert holding["said"] == "the statement most often blocking it"
    # the same waits are no hot row when they are a small share of the active time
    assert apply(rule, rows, rows, evidence(waits=Counter({"Lock:tuple": 5, "CPU": 95}))) == []


def test_commit_bound_names_the_statements_that_commit_most() -> None:
    assert [commit_kind(q) for q in ("commit", "end", "begin", "select 1")] == [
        "commit",
        "commit",
        None,
        None,
    ]
    assert commit_kind("with x as (delete from q returning *) select * from x") == "write"
    assert commit_kind("copy t from stdin") == "write" and commit_kind("copy t to stdout") is None
    before = [
        {"queryid": "1", "query": "insert into audit_log (k) values ($1)", "calls": 100},
        {"queryid": "2", "query": "select * from t where id = $1", "calls": 0},
    ]
    after = [
        {**before[0], "calls": 3100},
        {**before[1], "calls": 90_000},
        {"queryid": "3", "query": "COMMIT", "calls": 400},  # first seen during the sample
    ]
    named = committing(before, after, 10.0)
    assert [(s["query"], s["calls_per_s"], s["kind"]) for s in named] == [
        ("insert into audit_log (k) values ($1)", 300.0, "write"),
        ("COMMIT", 40.0, "commit"),
    ]
    rule = RULES["commit-bound"]
    row = {"database": "shop", "xact_commit": 0, "blks_hit": 0, "blks_read": 0, "sessions": 0}
    later = {**row, "xact_commit": 3500}
    waits = Counter({"IO:WalSync": 40, "CPU": 60})
    readings = Readings(
        evidence(waits=waits),
        {"advise_database": [row], "advise_statements": before},
        {"advise_database": [later], "advise_statements": after},
        {},
    )
    (found,) = advise([rule], readings).findings
    assert found.message.endswith(
        "; the statement committing most: `insert into audit_log (k) values ($1)` (300 a second)"
    )
    assert [s["query"] for s in found.statements] == [s["query"] for s in named]
    without = apply(rule, [row], [later], evidence(waits=waits, statements=False))
    assert without[0].message.endswith("(pg_stat_statements would name the statements)")


def test_pg_stats_showing_nothing_is_told_by_its_real_reason() -> None:
    rule = RULES["scattered-rows-per-key"]
    hidden = {"stats_visible": False}
    assert unmet_need(rule, evidence(**hidden, tables=0)) == (
        "the database has no tables: nothing to look at"
    )
    assert "hold no rows" in (unmet_need(rule, evidence(**hidden, tables_with_rows=0)) or "")
    never = evidence(**hidden, tables=2, tables_with_rows=1, never_analyzed=("public.t",))
    assert "ANALYZE" in (unmet_need(rule, never) or "")
    assert "grant it SELECT" in (unmet_need(rule, evidence(**hidden, tables=3)) or "")


def test_young_statistics_show_unused_indexes_with_their_caveat() -> None:
    rule = RULES["unused-index"]
    row = {
        "index": "public.t_b",
        "table": "public.t",
        "bytes": 50 * 2**20,
        "size": "50 MB",
        "stats_since": "the server started",
    }
    readings = Readings(evidence(stats_age_s=3600), {rule.query: [row]}, {}, {})
    result = advise([rule], readings)
    assert not result.not_checked and result.checked == (rule,)
    (found,) = result.findings
    assert found.caveat is not None and found.caveat.startswith("statistics are 0.0 days old")
    doc = advice_document(result, {"started_at": "x", "server": "s"})
    assert "look again later" in doc["findings"][0]["caveat"]
    old = advise([rule], Readings(evidence(), {rule.query: [row]}, {}, {}))
    assert old.findings[0].caveat is None


def test_the_terminal_says_what_was_not_checked_and_where_time_went() -> None:
    """ "No findings" is not "nothing wrong": the terminal lists the rules it could not
    check and why, and the largest shares of the sampled active time."""
    rules = [RULES["invalid-index"], RULES["lock-queue"]]
    waits = Counter({"Lock:transactionid": 6, "CPU": 2, "IdleInTransaction": 8})
    readings = Readings(evidence(statements=False, waits=waits), {}, {}, {})
    doc = advice_document(advise(rules, readings), {"started_at": "x", "server": "s"})
    console = Console(record=True, width=200, file=io.StringIO())
    print_document_summary(console, advice_report(doc))
    text = console.export_text()
    assert "No findings from the 1 rule checked." in text
    assert "lock-queue: pg_stat_statements is not installed" in text
    assert "Lock:transactionid 75%, CPU 25% of the other sessions' active time" in text
    assert "idle in a transaction: 50% of all samples" in text
