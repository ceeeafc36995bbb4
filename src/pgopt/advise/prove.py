"""`pgopt advise --prove RULE`: a finding's fix measured, not estimated.

A finding on the user's objects becomes an A/B (pgopt ab) on a throwaway server:
the objects copied from the live server (pg_dump, read-only), a workload that
touches them (a statement drawn from the data as `ab --synthesize` draws it, the
source's own statements on a table, or a script as it is), A as is and B with the
fix: a schema change, or the statement rewritten (SKIP LOCKED). Its verdict becomes the finding's
proof: `proven faster (×k [interval])`, `no measurable effect`, `slower`, or
`not testable here` with the reason. `plan_proof` is pure; `verdict_of` reads a
finished A/B.
"""

from __future__ import annotations

from dataclasses import dataclass

from pglast.parser import ParseError

from ..model.result import LabResult
from ..sqltree import tables_read
from .findings import Finding
from .sql_checks import with_skip_locked


@dataclass(frozen=True)
class ProofPlan:
    title: str
    fix_title: str
    fix_sql: str
    tables: tuple[str, ...]  # pg_dump --table patterns: what to copy
    statements: tuple[str, ...] = ()  # normalized (with $n): scripts drawn from the data
    scripts: tuple[str, ...] = ()  # pgbench scripts as they are
    b_statements: tuple[str, ...] = ()  # B's own statements, in place of `statements`
    naming: str = ""  # or the workload: every statement of the source naming this table
    transaction: bool = False  # each script one transaction (locks held until commit)
    clients: int = 2
    assumption: str = ""  # what the copy cannot know about the real workload


NOT_TESTABLE = {
    "commit-bound": "a setting: measure it on your workload with "
    "`pgopt ab --synthesize --b-setting synchronous_commit=off`",
    "statement-logging": "a setting: measure it on your workload with "
    "`pgopt ab --synthesize --b-setting log_statement=none`",
    "checkpoints-requested": "a setting of the whole server: the batch lab shows the mechanism",
    "connection-per-transaction": "a pooler in front of the server: the login lab shows it",
    "table-bloat": "a copy made by pg_dump is not bloated; pgstattuple measured the waste "
    "itself, and the queue lab shows what dead rows cost a scan",
}


def plan_proof(finding: Finding) -> ProofPlan | str:
    """The experiment that measures `finding`'s fix, or why there is none here."""
    e, rule = finding.evidence, finding.rule.id
    if rule == "lock-queue":
        query = str(e["query"])
        try:
            tables = tables_read(query)
        except ParseError as error:
            return f"the statement does not parse: {error}"
        return ProofPlan(
            title=f"SKIP LOCKED in `{' '.join(query.split())[:60]}`",
            fix_title="the statement with SKIP LOCKED",
            fix_sql="",
            tables=tables,
            statements=(query,),
            b_statements=(with_skip_locked(query),),
            transaction=True,
            clients=4,
            assumption="each worker takes its rows and commits at once; a real worker "
            "holds them while it works, and waits on them longer",
        )
    if rule in ("duplicate-index", "unused-index"):
        why = f"{e['covered_by']} covers it" if rule == "duplicate-index" else "no scan uses it"
        return ProofPlan(
            title=f"DROP INDEX {e['index']} ({why})",
            fix_title=f"DROP INDEX {e['index']}",
            fix_sql=f"drop index {e['index']};\n",
            tables=(str(e["table"]),),
            naming=str(e["table"]),
            assumption="the workload is the source's own statements on the table, as "
            "pg_stat_statements counts them; a standby's reads are not among them",
        )
    if rule == "scattered-rows-per-key":
        return ProofPlan(
            title=f"{e['table']}: CLUSTER on {e['index']}",
            fix_title=f"CLUSTER {e['table']} USING {e['index_name']}",
            fix_sql=f"cluster {e['table']} using {e['index_name']};\n",
            tables=(str(e["table"]),),
            statements=(f"select * from {e['table']} where {e['column_ident']} = $1",),
        )
    if rule == "sequence-without-cache":
        return ProofPlan(
            title=f"{e['sequence']}: a cache of 100",
            fix_title=f"ALTER SEQUENCE {e['sequence']} CACHE 100",
            fix_sql=f"alter sequence {e['sequence']} cache 100;\n",
            tables=(str(e["sequence"]),),
            scripts=(f"select nextval('{e['sequence']}');\n",),
            clients=4,
        )
    return NOT_TESTABLE.get(rule, "no experiment for this rule yet")


def verdict_of(result: LabResult) -> str:
    """B against A as a proof: the verdict, its ratio and interval, the rounds."""
    b = result.step("b")
    ratio = b.ratio_vs_previous
    figures = ""
    if ratio is not None:
        low, high = ratio.ci95
        figures = f" (×{ratio.median:.2f} [{low:.2f}–{high:.2f}], {len(b.runs)} rounds)"
    verdict = b.verdict_vs_previous.value
    if verdict == "faster":
        return "proven faster" + figures
    if verdict == "slower":
        return "slower" + figures
    if verdict == "no-change":
        return "no measurable effect" + figures
    return "no measurable effect: inconclusive, neither faster nor within the margin" + figures
