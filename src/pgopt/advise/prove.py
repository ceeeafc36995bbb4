"""`pgopt advise --prove RULE`: a finding's fix measured, not estimated; its plan here
(pure), its run in proof_run.py.

A finding on the user's objects becomes an A/B (pgopt ab) on a throwaway server:
the objects copied from the live server (pg_dump, read-only), a workload that
touches them (a statement drawn from the data as `ab --synthesize` draws it, the
source's own statements on a table, or a script as it is), A as is and B with the
fix: a schema change, the statement rewritten (SKIP LOCKED), or another protocol.
What to run comes from the rule's `[proof]` (advise/rules.py), filled in with the
finding's evidence. Its verdict becomes the finding's proof: `proven faster (×k
[interval])`, `no measurable effect`, `slower`, `not proven: inconclusive` with
what the run could have detected (ab/conclusion.py), or `not testable here` with
the reason.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from pglast.parser import ParseError

from ..sqltree import quote_literal, tables_read
from .findings import Finding
from .sql_checks import REWRITES


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
    b_mode: str | None = None  # B's pgbench protocol
    transaction: bool = False  # each script one transaction (locks held until commit)
    clients: int = 2
    assumption: str = ""  # what the copy cannot know about the real workload


def plan_proof(finding: Finding) -> ProofPlan | str:
    """The experiment that measures `finding`'s fix, or why there is none here."""
    spec, e = finding.rule.proof, finding.evidence
    if spec.not_testable:
        return spec.not_testable
    statements = tuple(_fill(s, e) for s in spec.statements)
    try:
        tables = tuple(_fill(t, e) for t in spec.tables)
        if spec.tables_of:
            tables += tables_read(str(e[spec.tables_of]))
        b_statements: tuple[str, ...] = ()
        if spec.rewrite:
            b_statements = tuple(REWRITES[spec.rewrite](s) for s in statements)
    except ParseError as error:
        return f"the statement does not parse: {error}"
    return ProofPlan(
        title=_fill(spec.title, e),
        fix_title=_fill(spec.fix, e),
        fix_sql=_fill(spec.fix_sql, e) + "\n" if spec.fix_sql else "",
        tables=tables,
        statements=statements,
        scripts=tuple(_fill(s, e) + "\n" for s in spec.scripts),
        b_statements=b_statements,
        naming=_fill(spec.naming, e),
        b_mode=spec.b_mode,
        transaction=spec.transaction,
        clients=spec.clients,
        assumption=spec.assumption,
    )


class _SqlFormatter(string.Formatter):
    """A rule's template filled with its evidence; `{name!l}` writes the value as an
    SQL string literal (a name read from the server may hold a quote: in a pgbench
    script, the text after it would run as SQL, or a backslash as a meta-command).
    The names the rules' queries give are quoted as identifiers already (%I)."""

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "l":
            return quote_literal(str(value))
        return super().convert_field(value, conversion)


def _fill(template: str, evidence: dict[str, Any]) -> str:
    return _SqlFormatter().vformat(template, (), evidence)
