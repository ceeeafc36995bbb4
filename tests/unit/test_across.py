"""A lab or an A/B across two servers (two PostgreSQL versions), without a server:
the steps placed on each side, the settings each side is given checked against
its version, what differs between the versions' settings, the statements that
moved, and the version tags `runs` and reports show."""

from dataclasses import replace
from pathlib import Path

import pytest

from pgopt.analysis.statement_moves import across_server_moves, compare_statements
from pgopt.errors import UsageError
from pgopt.lab.across import Side, across, settings_across, shared_settings
from pgopt.lab.catalog import resolve_lab
from pgopt.model.result import LabResult, StepResult
from pgopt.report.fields import describe_across, server_versions
from pgopt.report.statement_blocks import summary_lines
from pgopt.store import load_result

from .test_golden import RESULTS

OLD = Side("a", "15.20", frozenset({"work_mem", "jit", "synchronous_commit"}))
NEW = Side("b", "18.6", frozenset({"work_mem", "jit", "io_method", "synchronous_commit"}))


def test_a_labs_steps_are_each_measured_on_both_servers() -> None:
    smoke = resolve_lab("smoke")
    chosen = [smoke.step("baseline"), smoke.step("async_commit")]
    lab = across(smoke, (OLD, NEW), chosen)
    names = [(s.name, s.server, s.parent, s.baseline) for s in lab.steps]
    assert names == [
        ("baseline-a", "a", None, True),
        ("baseline-b", "b", "baseline-a", False),
        ("async_commit-a", "a", None, True),
        ("async_commit-b", "b", "async_commit-a", False),
    ]
    second = lab.step("async_commit-b")
    assert second.reported is None
    assert second.settings == smoke.step("async_commit").settings  # carried to both sides
    assert second.title.endswith("(PostgreSQL 18.6)")
    assert second.changes["server"] == "PostgreSQL 18.6"


def test_a_setting_one_version_lacks_is_refused_before_any_server_starts() -> None:
    smoke = resolve_lab("smoke")
    step = replace(smoke.step("baseline"), settings={"io_method": "sync"})
    with pytest.raises(UsageError, match=r"baseline-a's settings io_method: PostgreSQL 15.20 "):
        across(replace(smoke, steps=(step,)), (OLD, NEW), [step])
    # on the side that knows it, the same setting is fine
    both_new = (replace(NEW, name="a"), NEW)
    assert across(replace(smoke, steps=(step,)), both_new, [step])


def test_settings_given_to_both_apply_where_each_version_has_them() -> None:
    both = {"jit": "off", "io_method": "sync"}
    (a, b), left_out = shared_settings(both, ({"jit": "on"}, {}), (OLD, NEW))
    assert a == {"jit": "on"}  # A's own over the shared one; no io_method on 15
    assert b == {"jit": "off", "io_method": "sync"}
    assert left_out == [
        "--setting io_method applies to b only: PostgreSQL 15.20 (a) has no such setting"
    ]


def test_labs_with_companions_do_not_run_across_servers() -> None:
    replicas = resolve_lab("replicas")
    with pytest.raises(UsageError, match="runs standbys: it cannot run across two servers"):
        across(replicas, (OLD, NEW), list(replicas.steps))
    login = resolve_lab("login")  # its pooled step goes through pgbouncer; the others do not
    with pytest.raises(UsageError, match="step pooled of lab login goes through a pooler"):
        across(login, (OLD, NEW), [login.step("baseline"), login.step("pooled")])
    assert login.step("async_commit").reported is not None  # the article's 717 tps
    lab = across(login, (OLD, NEW), [login.step("async_commit")])
    assert [s.reported for s in lab.steps] == [None, None]  # not a comparison across versions


def test_settings_only_one_version_has_and_defaults_that_changed() -> None:
    a = {"work_mem": ("4096", "kB"), "old_snapshot_threshold": ("-1", "min"), "jit": ("on", "")}
    b = {"work_mem": ("4096", "kB"), "io_method": ("worker", ""), "jit": ("off", "")}
    facts = settings_across(a, b, ("15.20", "18.6"))
    assert facts["only_a"] == ["old_snapshot_threshold"] and facts["only_b"] == ["io_method"]
    assert facts["defaults_changed"] == {"jit": {"a": "on", "b": "off"}}
    assert describe_across(facts) == (
        "between PostgreSQL 15.20 and 18.6: 1 settings only in 18.6; 1 only in 15.20; "
        "1 defaults changed (jit on → off)"
    )


def _across_result(ms_a: dict[str, float], ms_b: dict[str, float]) -> LabResult:
    """smoke-a's result as if its steps had run on two servers, with these times."""
    result = load_result(RESULTS / "smoke-a")
    a, b = result.steps[0], result.steps[1]

    def with_times(step: StepResult, name: str, times: dict[str, float]) -> StepResult:
        version = {"a": "15.20", "b": "18.6"}[name]
        rows = [{"query": q, "calls": 100, "mean_ms": ms} for q, ms in times.items()]
        rows.append({"query": "select * from pg_stat_statements", "calls": 1, "mean_ms": 9.0})
        runs = tuple(replace(r, stats={"statements": rows}) for r in step.runs)
        server = {"name": name, "server_version": version, "pg_bin": "/x"}
        return replace(step, runs=runs, server=server)

    steps = (with_times(a, "a", ms_a), replace(with_times(b, "b", ms_b), compared_with=a.name))
    target = {**result.target, "servers": {"a": {"server_version": "15.20"},
                                           "b": {"server_version": "18.6"}}}  # fmt: skip
    return replace(result, steps=steps, target=target)


def test_the_statements_that_moved_most_each_way() -> None:
    result = _across_result(
        {"select 1 from t where b = $1": 40.0, "update t set x = $1": 1.0, "select 2": 5.0},
        {"select 1 from t where b = $1": 0.5, "update t set x = $1": 1.5, "select 2": 5.2},
    )
    (moves,) = across_server_moves(result)
    assert moves.compared == 3  # pgopt's own read of pg_stat_statements left out
    assert [(m.query, m.ratio) for m in moves.faster] == [("select 1 from t where b = $1", 0.0125)]
    assert [(m.query, m.ratio) for m in moves.slower] == [("update t set x = $1", 1.5)]
    lines = summary_lines(result)
    step, parent = result.steps[1].name, result.steps[0].name
    assert lines == [
        f"{step} vs {parent}: faster ×0.013: select 1 from t where b = $1 (40 → 0.5 ms a call)",
        f"{step} vs {parent}: slower ×1.50: update t set x = $1 (1 → 1.5 ms a call)",
    ]
    assert server_versions(result.target) == "15.20 (a), 18.6 (b)"
    # steps on one server are not compared statement by statement
    same = compare_statements(result.steps[1], result.steps[0])
    assert same.compared == 3


def test_runs_and_reports_show_both_versions(tmp_path: Path) -> None:
    from pgopt.report.document import build_document
    from pgopt.report.markdown import render_document

    result = _across_result({"select 2": 5.0}, {"select 2": 5.0})
    page = render_document(build_document(result))
    assert "PostgreSQL 15.20 (a), 18.6 (b)" in page
    assert "none of 1 statement moved by 10% or more a call" in page
