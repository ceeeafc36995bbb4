"""The advice of one `pgopt advise` run (pure): rules applied to the readings, most
severe first, and advice.json (schema "pgopt.advice/1", schemas/advice-1.json);
advise/report.py renders it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..analysis.observed import shares
from .behind import BEHIND, STATEMENTS
from .findings import Finding, NotChecked, Readings, apply, unmet_need, young_statistics
from .rules import Rule

SCHEMA = "pgopt.advice/1"


@dataclass(frozen=True)
class Advice:
    readings: Readings
    findings: tuple[Finding, ...]
    not_checked: tuple[NotChecked, ...]
    checked: tuple[Rule, ...]

    def warnings(self) -> list[str]:
        """What limits the evidence, for the reader before the findings."""
        e = self.readings.evidence
        out = []
        if e.stats_age_s < 86_400:
            out.append(
                f"the statistics cover {_span(e.stats_age_s)} (since a reset or a restart): "
                "counters and ratios describe that time only"
            )
        if e.never_analyzed:
            shown = ", ".join(e.never_analyzed[:5]) + (" ..." if len(e.never_analyzed) > 5 else "")
            out.append(f"never analyzed, so no pg_stats to judge them by: {shown}")
        if not e.waits:
            out.append("the sample saw no other session: wait-based rules had nothing to judge")
        return out


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def advise(rules: Iterable[Rule], readings: Readings) -> Advice:
    findings: list[Finding] = []
    not_checked: list[NotChecked] = []
    checked: list[Rule] = []
    for rule in rules:
        # statistics too young to prove an absence: the rows are shown, with that caveat
        young = young_statistics(rule, readings.evidence)
        reason = unmet_need(rule, readings.evidence) or readings.failed.get(rule.query)
        if reason and reason != young:
            not_checked.append(NotChecked(rule, reason))
            continue
        checked.append(rule)
        before = readings.before.get(rule.query, [])
        after = readings.after.get(rule.query, before)
        found = apply(rule, before, after, readings.evidence, _behind(rule, readings))
        if young:
            caveat = f"{young}: none so far is no proof of none; look again later"
            found = [replace(f, caveat=caveat) for f in found]
        findings.extend(found)
    findings.sort(key=lambda f: f.severity.rank)
    return Advice(readings, tuple(findings), tuple(not_checked), tuple(checked))


def _behind(rule: Rule, readings: Readings) -> list[dict[str, Any]] | None:
    """The statements behind `rule`'s findings, where it names them and they were read."""
    if rule.behind is None or STATEMENTS not in readings.after:
        return None
    before = readings.before.get(STATEMENTS, [])
    return BEHIND[rule.behind](before, readings.after[STATEMENTS], readings.evidence.sample_s)


def advice_document(advice: Advice, meta: dict[str, Any]) -> dict[str, Any]:
    e = advice.readings.evidence
    return {
        "schema": SCHEMA,
        **meta,
        "evidence": {
            "server_version_num": e.version_num,
            "stats_age_s": round(e.stats_age_s, 1),
            "uptime_s": round(e.uptime_s, 1),
            "stats_visible": e.stats_visible,
            "pg_stat_statements": e.statements,
            "pgstattuple": e.pgstattuple,
            "tables": e.tables,
            "tables_with_rows": e.tables_with_rows,
            "never_analyzed": list(e.never_analyzed),
            "sample_s": round(e.sample_s, 2),
            "waits": shares(e.waits),
        },
        "warnings": advice.warnings(),
        "findings": [_finding(f) for f in advice.findings],
        "not_checked": [{"rule": n.rule.id, "reason": n.reason} for n in advice.not_checked],
        "rules_checked": [r.id for r in advice.checked],
    }


def _finding(f: Finding) -> dict[str, Any]:
    rule = f.rule
    out: dict[str, Any] = {
        "rule": rule.id,
        "title": rule.title,
        "severity": rule.severity.value,
        "message": f.message,
        "fix": f.fix,
        "thresholds": [
            {
                "field": t.field,
                "op": t.op,
                "value": t.value,
                "actual": f.evidence.get(t.field),
                "source": t.source,
            }
            for t in rule.thresholds
        ],
        "evidence": f.evidence,
        "proof": (
            f"not testable here: {rule.proof.not_testable}"
            if rule.proof.not_testable
            else f"not measured: `pgopt advise --prove {rule.id}` measures it"
        ),
    }
    if f.caveat:
        out["caveat"] = f.caveat
    if f.statements:
        out["statements"] = list(f.statements)
    if rule.source:
        out["source"] = rule.source
    if rule.seed:
        out["seed"] = rule.seed
    if rule.experiment:
        out["experiment"] = rule.experiment
    return out
