"""`pgopt advise` without a server: the rule files, thresholds and their sources,
rates over the sample, wait shares, the SQL check of FOR UPDATE, and the reasons a
rule is not checked."""

import io
from collections import Counter

import pytest
from rich.console import Console

from pgopt.advise.advice import advice_document, advise
from pgopt.advise.findings import Evidence, Readings, apply, unmet_need, wait_share
from pgopt.advise.report import advice_report
from pgopt.advise.rules import Threshold, all_rules, read_rule
from pgopt.advise.sql_checks import locks_rows_without_skip_locked, with_skip_locked
from pgopt.errors import LabError
from pgopt.report import html, markdown
from pgopt.report.terminal import print_document_summary
from pgopt.sqltree import tables_read

RULES = {r.id: r for r in all_rules()}


def evidence(**changes: object) -> Evidence:
    base: dict[str, object] = {
        "version_num": 180006,
        "stats_age_s": 30 * 86_400,
        "uptime_s": 30 * 86_400,
        "stats_visible": True,
        "statements": True,
        "never_analyzed": (),
        "sample_s": 10.0,
        "waits": Counter(),
    }
    return Evidence(**{**base, **changes})  # type: ignore[arg-type]


def test_every_rule_loads_with_a_source_for_each_threshold() -> None:
    assert len(RULES) >= 16
    for rule in RULES.values():
        assert rule.thresholds or rule.source
        assert all(t.source for t in rule.thresholds)
    assert [r.severity.value for r in all_rules()] == sorted(
        (r.severity.value for r in all_rules()), key=["critical", "warning", "info"].index
    )


def test_a_hot_sequence_without_cache_is_found_by_its_rate_and_a_cached_one_is_not() -> None:
    rule = RULES["sequence-without-cache"]
    before = [
        {"sequence": "public.hot", "cache_size": 1, "last_value": 1000},
        {"sequence": "public.cached", "cache_size": 100, "last_value": 1000},
        {"sequence": "public.cold", "cache_size": 1, "last_value": 1000},
    ]
    after = [
        {"sequence": "public.hot", "cache_size": 1, "last_value": 51_000},
        {"sequence": "public.cached", "cache_size": 100, "last_value": 51_000},
        {"sequence": "public.cold", "cache_size": 1, "last_value": 1010},
    ]
    (found,) = apply(rule, before, after, evidence())
    assert found.message == "public.hot: cache 1, 5,000 values a second during the sample"
    assert found.evidence["last_value_per_s"] == 5000
    assert "CACHE 100" in found.fix


def test_a_lock_queue_needs_the_statement_and_the_waits() -> None:
    rule = RULES["lock-queue"]
    rows = [
        {"queryid": "1", "query": "select * from q where id = $1 for update", "calls": 0},
        {"queryid": "2", "query": "select * from q limit $1 for update skip locked", "calls": 0},
    ]
    later = [{**rows[0], "calls": 500}, {**rows[1], "calls": 500}]
    waits = Counter({"Lock:transactionid": 30, "CPU": 50, "Client:ClientRead": 400})
    (found,) = apply(rule, rows, later, evidence(waits=waits))
    assert found.evidence["calls_per_s"] == 50 and found.evidence["wait_share"] == 30 / 80
    assert apply(rule, rows, later, evidence(waits=Counter({"CPU": 80}))) == []


def test_wait_shares_are_of_active_time_and_ignore_the_case_of_event_names() -> None:
    waits = Counter({"IO:WalSync": 20, "LWLock:WALWrite": 10, "CPU": 70, "Client:ClientRead": 900})
    assert wait_share(waits, ["IO:WALSync", "LWLock:WALWrite"]) == pytest.approx(0.3)
    assert wait_share(Counter(), ["CPU"]) == 0.0


@pytest.mark.parametrize(
    ("query", "waits_for_a_row"),
    [
        ("select id from jobs where state = $1 order by id limit $2 for update", True),
        ("select id from jobs for no key update", True),
        ("with x as (select id from q for update) delete from q using x where q.id = x.id", True),
        ("select id from jobs for update skip locked", False),
        ("select id from jobs for share nowait", False),
        ("select 'for update' from jobs", False),
        ("update jobs set n = n + 1", False),
        ("not sql at all", False),
    ],
)
def test_for_update_without_skip_locked_is_found_by_the_parser(
    query: str, waits_for_a_row: bool
) -> None:
    assert locks_rows_without_skip_locked(query) is waits_for_a_row


def test_derived_figures_and_any_thresholds() -> None:
    rule = RULES["cache-hit-ratio"]
    before = [{"database": "shop", "blks_hit": 0, "blks_read": 0, "xact_commit": 0}]
    after = [{"database": "shop", "blks_hit": 9000, "blks_read": 1000, "xact_commit": 0}]
    (found,) = apply(rule, before, after, evidence())
    assert found.evidence["hit_ratio"] == pytest.approx(0.9)
    idle = [{"database": "shop", "blks_hit": 0, "blks_read": 0, "xact_commit": 0}]
    assert apply(rule, before, idle, evidence()) == []  # no reads: no ratio, no finding
    logging = RULES["statement-logging"]
    assert apply(
        logging, [], [{"log_statement": "none", "log_min_duration_statement": "0"}], evidence()
    )
    assert not apply(
        logging, [], [{"log_statement": "ddl", "log_min_duration_statement": "250"}], evidence()
    )


def test_rules_say_why_the_evidence_cannot_support_them() -> None:
    assert "7 days" in (unmet_need(RULES["unused-index"], evidence(stats_age_s=3600)) or "")
    assert "shared_preload_libraries" in (
        unmet_need(RULES["lock-queue"], evidence(statements=False)) or ""
    )
    assert "grant it SELECT on the tables" in (
        unmet_need(RULES["scattered-rows-per-key"], evidence(stats_visible=False)) or ""
    )
    assert "14 to" in (
        unmet_need(RULES["connection-per-transaction"], evidence(version_num=130015)) or ""
    )
    assert unmet_need(RULES["unused-index"], evidence()) is None


def test_the_advice_document_lists_findings_and_what_was_not_checked() -> None:
    rules = [RULES["invalid-index"], RULES["lock-queue"]]
    readings = Readings(
        evidence(statements=False, stats_age_s=60),
        {"advise_invalid_indexes": [{"index": "public.i", "table": "public.t", "size": "8 kB"}]},
        {},
        {},
    )
    doc = advice_document(advise(rules, readings), {"started_at": "x", "server": "s"})
    assert doc["schema"] == "pgopt.advice/1"
    assert [f["rule"] for f in doc["findings"]] == ["invalid-index"]
    # a fix no copy can show says so at once, without --prove
    assert doc["findings"][0]["proof"].startswith("not testable here: pg_dump does not copy")
    assert [n["rule"] for n in doc["not_checked"]] == ["lock-queue"]
    assert any("cover 60 s" in w for w in doc["warnings"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id = 'x'", "field 'title' is required"),
        (
            'id="x"\ntitle="t"\nseverity="bad"\nquery="advise_tables"\nmessage="m"\nfix="f"\n',
            "severity",
        ),
        (
            'id="x"\ntitle="t"\nseverity="info"\nquery="nope"\nmessage="m"\nfix="f"\nsource="s"\n',
            "no query nope.sql",
        ),
        (
            'id="x"\ntitle="t"\nseverity="info"\nquery="advise_tables"\nmessage="m"\nfix="f"\n',
            "says what defines it",
        ),
        (
            'id="x"\ntitle="t"\nseverity="info"\nquery="advise_tables"\nmessage="m"\nfix="f"\n'
            'rates=["n"]\nsource="s"\n',
            "name their key",
        ),
        (
            'id="x"\ntitle="t"\nseverity="info"\nquery="advise_tables"\nmessage="m"\nfix="f"\n'
            '[[threshold]]\nfield="a"\nop="~"\nvalue=1\nsource="s"\n',
            "expected one of",
        ),
    ],
)
def test_a_bad_rule_file_names_its_field(text: str, message: str) -> None:
    with pytest.raises(LabError, match=message):
        read_rule(text + '\n[proof]\nnot_testable = "n"\n', "rules/x.toml")


RULE = (
    'id="x"\ntitle="t"\nseverity="info"\nquery="advise_tables"\nmessage="m"\nfix="f"\nsource="s"\n'
)


@pytest.mark.parametrize(
    ("proof", "message"),
    [
        ("", "field 'proof' is required"),
        ('[proof]\ntitle="t"\nfix="f"\nfix_sql="s"\ntables=["t"]\n', "runs statements"),
        ('[proof]\ntitle="t"\nfix="f"\nfix_sql="s"\nscripts=["s"]\n', "tables to copy"),
        ('[proof]\ntitle="t"\nfix="f"\ntables=["t"]\nscripts=["s"]\n', "B differs from A"),
        (
            '[proof]\ntitle="t"\nfix="f"\ntables=["t"]\nscripts=["s"]\nrewrite="x"\n',
            "unknown 'x'",
        ),
        (
            '[proof]\ntitle="t"\nfix="f"\ntables=["t"]\nscripts=["s"]\nb_mode="fast"\n',
            "expected one of simple",
        ),
        ('[proof]\nnot_testable="n"\ntitle="t"\n', "title"),
    ],
)
def test_a_rules_proof_is_checked_when_it_loads(proof: str, message: str) -> None:
    with pytest.raises(LabError, match=message):
        read_rule(RULE + proof, "rules/x.toml")


def test_threshold_operators() -> None:
    assert Threshold("c", "abs<", 0.5, "s").holds({"c": -0.3})
    assert not Threshold("c", "abs<", 0.5, "s").holds({"c": -0.7})
    assert not Threshold("c", ">=", 1, "s").holds({"c": None})
    assert Threshold("s", "==", "all", "s").holds({"s": "all"})


def test_an_unknown_rule_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from pgopt.cli import main

    assert main(["advise", "--dsn", "postgresql:///x", "--rule", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pgopt: error: --rule nope: no such rule")


def test_a_proof_is_planned_from_the_findings_evidence() -> None:
    from pgopt.advise.findings import Finding
    from pgopt.advise.prove import ProofPlan, plan_proof

    scattered = Finding(
        RULES["scattered-rows-per-key"],
        "m",
        "f",
        {
            "table": "public.events",
            "index": "public.events_key",
            "index_name": "events_key",
            "column_ident": '"Key"',
        },
    )
    plan = plan_proof(scattered)
    assert isinstance(plan, ProofPlan)
    assert plan.fix_sql == "cluster public.events using events_key;\n"
    assert plan.statements == ('select * from public.events where "Key" = $1',)
    assert plan.tables == ("public.events",)
    sequence = Finding(RULES["sequence-without-cache"], "m", "f", {"sequence": "public.s"})
    plan = plan_proof(sequence)
    assert isinstance(plan, ProofPlan) and plan.scripts == ("select nextval('public.s');\n",)
    setting = plan_proof(Finding(RULES["commit-bound"], "m", "f", {}))
    assert isinstance(setting, str) and "--b-setting synchronous_commit=off" in setting
    queue = "select id from public.jobs where state = $1 order by id limit $2 for update"
    statement = {"query": queue, "query_short": queue[:20]}
    plan = plan_proof(Finding(RULES["lock-queue"], "m", "f", statement))
    assert isinstance(plan, ProofPlan) and plan.transaction and plan.tables == ("public.jobs",)
    assert plan.statements == (queue,) and plan.fix_sql == ""
    assert plan.b_statements[0].endswith("FOR UPDATE SKIP LOCKED")
    duplicate = {"index": "public.o_c", "covered_by": "public.o_cp", "table": "public.o"}
    plan = plan_proof(Finding(RULES["duplicate-index"], "m", "f", duplicate))
    assert isinstance(plan, ProofPlan) and plan.fix_sql == "drop index public.o_c;\n"
    assert plan.naming == "public.o" and not plan.statements
    plan = plan_proof(Finding(RULES["planning-overhead"], "m", "f", statement))
    assert isinstance(plan, ProofPlan) and plan.b_mode == "prepared" and not plan.fix_sql
    assert plan.statements == (queue,) and plan.tables == ("public.jobs",)


def test_the_report_renders_the_advice_escaped_with_proofs_and_sources() -> None:
    rules = [RULES["invalid-index"], RULES["lock-queue"]]
    readings = Readings(
        evidence(statements=False, waits=Counter({"Lock:tuple": 3, "CPU": 1})),
        {"advise_invalid_indexes": [{"index": "public.<i>", "table": "t", "size": "8 kB"}]},
        {},
        {},
    )
    doc = advice_document(
        advise(rules, readings), {"started_at": "2026-11-24T04:00:00Z", "server": "s"}
    )
    doc["findings"][0]["proof"] = "proven faster (×1.50 [1.40–1.60], 5 rounds)"
    report = advice_report(doc)
    md = markdown.render_document(report)
    page = html.render_document(report, [])
    assert "public.<i>" not in page and "public.&lt;i&gt;" in page
    assert "**proven faster (×1.50 [1.40–1.60], 5 rounds)**" in md
    assert "`lock-queue`" in md and "pg_stat_statements" in md  # not checked, and why
    assert "Lock:tuple" in md and "75%" in md  # the waits sampled
    assert "from advice.json (pgopt.advice/1)" in md
    assert "pgopt advise --dsn s" in md
    console = Console(record=True, width=200, file=io.StringIO())
    print_document_summary(console, report)
    text = console.export_text()
    assert "invalid-index" in text and "thresholds" in text and "proven faster" in text


def test_the_lock_queue_fix_is_the_statement_with_skip_locked_and_its_tables() -> None:
    query = (
        "with c as (select id from jobs j join public.kinds k on k.id = j.kind "
        "where j.state = $1 order by id limit $2 for update of j) "
        "update jobs set state = $3 from c where jobs.id = c.id"
    )
    fixed = with_skip_locked(query)
    assert "FOR UPDATE OF j SKIP LOCKED" in fixed and "$3" in fixed
    assert not locks_rows_without_skip_locked(fixed)
    assert tables_read(query) == ("jobs", "public.kinds")
    assert tables_read("select 1 from t for update nowait") == ("t",)


def test_an_undecided_proof_is_not_proven_and_says_what_it_could_detect() -> None:
    """'no measurable effect' is a decided no-change; an inconclusive proof says only
    that it proved nothing, and what the run could have seen."""
    from dataclasses import replace

    from pgopt.ab.conclusion import verdict_of
    from pgopt.model.result import Ratio
    from pgopt.model.verdict import Verdict
    from pgopt.store import load_result

    from .test_golden import RESULTS

    result = load_result(RESULTS / "smoke-c")
    a, b = result.steps[0], result.steps[1]
    ratio = Ratio(1.07, (0.32, 3.55), rounds=3, detectable=0.9)
    runs = b.runs[:3]

    def proof(verdict: Verdict) -> str:
        steps = (
            replace(a, name="a"),
            replace(b, name="b", ratio_vs_previous=ratio, verdict_vs_previous=verdict, runs=runs),
        )
        return verdict_of(replace(result, steps=steps))

    assert proof(Verdict.INCONCLUSIVE) == (
        "not proven: inconclusive (×1.07 [0.32–3.55], 3 rounds, could detect ≥90%)"
    )
    assert proof(Verdict.NO_CHANGE) == "no measurable effect (×1.07 [0.32–3.55], 3 rounds)"
    assert proof(Verdict.FASTER).startswith("proven faster (×1.07")
