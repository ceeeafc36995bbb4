"""`pgopt advise --prove RULE`: a finding's fix measured, not estimated.

A finding on the user's objects becomes an A/B (pgopt ab) on a throwaway server:
the objects copied from the live server (pg_dump, read-only), a workload that
touches them (a statement drawn from the data as `ab --synthesize` draws it, or a
script as it is), A as is and B with the fix. Its verdict becomes the finding's
proof: `proven faster (×k [interval])`, `no measurable effect`, `slower`, or
`not testable here` with the reason. `plan_proof` is pure; `verdict_of` reads a
finished A/B.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.result import LabResult
from .findings import Finding


@dataclass(frozen=True)
class ProofPlan:
    title: str
    fix_title: str
    fix_sql: str
    tables: tuple[str, ...]  # pg_dump --table patterns: what to copy
    statements: tuple[str, ...] = ()  # normalized (with $n): scripts drawn from the data
    scripts: tuple[str, ...] = ()  # pgbench scripts as they are
    clients: int = 2


NOT_TESTABLE = {
    "commit-bound": "a setting: measure it on your workload with "
    "`pgopt ab --synthesize --b-setting synchronous_commit=off`",
    "statement-logging": "a setting: measure it on your workload with "
    "`pgopt ab --synthesize --b-setting log_statement=none`",
    "checkpoints-requested": "a setting of the whole server: the batch lab shows the mechanism",
    "connection-per-transaction": "a pooler in front of the server: the login lab shows it",
}


def plan_proof(finding: Finding) -> ProofPlan | str:
    """The experiment that measures `finding`'s fix, or why there is none here."""
    e, rule = finding.evidence, finding.rule.id
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
