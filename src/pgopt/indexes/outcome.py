"""What the index advisor found, as data (pure): the statements and their plans, the
candidates and those existing indexes cover, the check on the copy and the chosen
set; and advice.json's view of it (the `missing-index` findings, one per index to
add, and the `indexes` section: every statement, candidate and threshold)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..markup import comment
from ..plans.shape import Plan, change_summary, plan_lines, total_cost
from ..report.fmt import format_bytes
from ..words import short_query
from .candidates import Candidate, Covered, TableFacts, estimated_bytes
from .selection import (
    MIN_GAIN,
    MIN_GAIN_SOURCE,
    TOLERANCE,
    TOLERANCE_SOURCE,
    WRITE_SOURCE,
    Choice,
    Weighed,
)
from .workload import SELECTION_SOURCE, Statement

RULE = "missing-index"
TITLE = "An index the workload's plans miss"
UNPROVED = f"not measured: `pgopt advise --prove {RULE}` measures it"


@dataclass
class IndexAdvice:
    statements: list[Statement]
    source: str  # "pg_stat_statements" or the --queries file
    cover: float | None = None  # the share of the time the statements taken make up
    refused: dict[str, str] = field(default_factory=dict)  # statement id -> why not
    candidates: list[Candidate] = field(default_factory=list)
    covered: list[Covered] = field(default_factory=list)
    tables: dict[str, TableFacts] = field(default_factory=dict)
    base_plans: dict[str, Plan] = field(default_factory=dict)  # on the copy
    plans_with: dict[str, dict[str, Plan]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: dict[Candidate, str] = field(default_factory=dict)  # not built: -> the plain index
    choice: Choice | None = None
    planner: str = ""  # which server checked them, and how the copy was made
    copy_s: float = 0.0
    sample: float | None = None  # percent of the big tables' rows the copy took
    left_out: dict[str, str] = field(default_factory=dict)  # relation -> why not copied

    def statement(self, sid: str) -> Statement:
        return next(s for s in self.statements if s.id == sid)


def thresholds(cover: float | None) -> list[dict[str, Any]]:
    """Every threshold the advisor applies, with where it comes from."""
    taken = (
        {"field": "execution_time_share", "op": ">=", "value": cover, "source": SELECTION_SOURCE}
        if cover is not None
        else {"field": "statements", "op": "==", "value": "--queries", "source": "every one"}
    )
    return [
        taken,
        {"field": "plan_cost_cut", "op": ">=", "value": MIN_GAIN, "source": MIN_GAIN_SOURCE},
        {"field": "set_saving", "op": ">=", "value": 1 - TOLERANCE, "source": TOLERANCE_SOURCE},
        {
            "field": "statement_saving_kept",
            "op": ">=",
            "value": 1 - TOLERANCE,
            "source": TOLERANCE_SOURCE,
        },
        {"field": "write_ms", "op": "<", "value": "saved_ms", "source": WRITE_SOURCE},
    ]


def findings(advice: IndexAdvice) -> list[dict[str, Any]]:
    """One `missing-index` finding per index of the chosen set, largest saving first."""
    if advice.choice is None:
        return []
    total = advice.choice.workload_ms or 1.0
    out = []
    ranked = sorted(advice.choice.chosen, key=lambda w: -sum(w.saved_ms.values()))
    for w in ranked:
        index = index_entry(advice, w)
        served = ", ".join(s["id"] for s in index["statements"])
        share = sum(advice.statement(s).total_ms for s in w.saved_ms) / total
        message = (
            f"{w.checked.candidate.table} {_columns_text(w.checked.candidate)}: "
            f"serves {served} ({share:.0%} of the workload's time), plan cost "
            f"{_cut_text(index)}; {format_bytes(w.checked.bytes)} on the copy"
        )
        out.append(
            {
                "rule": RULE,
                "title": TITLE,
                "severity": "warning",
                "message": message,
                "fix": w.checked.candidate.ddl(),
                "thresholds": [
                    {
                        "field": "plan_cost_cut",
                        "op": ">=",
                        "value": MIN_GAIN,
                        "actual": round(_cut(index), 3),
                        "source": MIN_GAIN_SOURCE,
                    },
                    {
                        "field": "write_ms",
                        "op": "<",
                        "value": round(sum(w.saved_ms.values()), 1),
                        "actual": round(w.write_ms, 1),
                        "source": WRITE_SOURCE,
                    },
                ],
                "evidence": {
                    "table": w.checked.candidate.table,
                    "saved_ms": round(sum(w.saved_ms.values()), 1),
                    "write_ms": round(w.write_ms, 1),
                    "workload_ms": round(total, 1),
                },
                "source": "plans: generic plans of the workload's statements; " + advice.planner,
                "proof": UNPROVED,
                "index": index,
            }
        )
    return out


def index_entry(advice: IndexAdvice, w: Weighed) -> dict[str, Any]:
    """An index to add as data: its shape, DDL, size, and the statements it serves
    with the planner's cost and plan before and after."""
    c = w.checked.candidate
    table = advice.tables.get(c.table)
    statements = []
    for sid in sorted(w.saved_ms, key=lambda s: -w.saved_ms[s]):
        before, after = advice.base_plans[sid], advice.plans_with[w.checked.name][sid]
        s = advice.statement(sid)
        statements.append(
            {
                "id": sid,
                "query": s.query,
                "calls": s.calls,
                "total_ms": round(s.total_ms, 1),
                "cost_before": round(total_cost(before), 2),
                "cost_after": round(total_cost(after), 2),
                "saved_ms": round(w.saved_ms[sid], 1),
                "plan_change": change_summary(before, after),
                "plan_before": plan_lines(before),
                "plan_after": plan_lines(after),
            }
        )
    return {
        "name": w.checked.name,
        "table": c.table,
        "columns": [{"expr": k.expr, "direction": "desc" if k.desc else "asc"} for k in c.keys],
        "include": list(c.include),
        "predicate": c.predicate,
        "method": c.method,
        "opclass": c.opclass,
        "ddl": c.ddl(),
        "estimated_bytes": estimated_bytes(c, table) if table else None,
        "bytes_on_copy": w.checked.bytes,
        "build_s_on_copy": round(w.checked.build_s, 3),
        "statements": statements,
        "writes_slowed": [{"id": sid, "query": advice.statement(sid).query} for sid in w.writes],
        "estimated_saving_ms": round(sum(w.saved_ms.values()), 1),
        "estimated_write_ms": round(w.write_ms, 1),
    }


def section(advice: IndexAdvice) -> dict[str, Any]:
    """advice.json's `indexes`: what was weighed, and every candidate's fate."""
    fates: list[dict[str, Any]] = []
    choice = advice.choice
    if choice is not None:
        for w in choice.chosen:
            fates.append({"ddl": w.checked.candidate.ddl(), "status": "chosen", "why": ""})
        for w, why in choice.rejected:
            fates.append({"ddl": w.checked.candidate.ddl(), "status": "rejected", "why": why})
    for c, plain in advice.skipped.items():
        why = (
            f"not built: {plain} already takes {1 - TOLERANCE:.0%} off the plan cost of "
            "every statement it could serve"
        )
        fates.append({"ddl": c.ddl(), "status": "rejected", "why": why})
    for name, why in advice.failed.items():
        fates.append({"ddl": name, "status": "failed", "why": why})
    for cov in advice.covered:
        fates.append(
            {"ddl": cov.candidate.ddl(), "status": "covered", "why": f"{cov.by} already serves it"}
        )
    return {
        "source": advice.source,
        "planner": advice.planner,
        "copy_s": round(advice.copy_s, 2),
        **({"sample_percent": advice.sample} if advice.sample is not None else {}),
        **({"left_out": advice.left_out} if advice.left_out else {}),
        "statements": [
            {
                "id": s.id,
                "query": s.query,
                "calls": s.calls,
                "total_ms": round(s.total_ms, 1),
                **({"refused": advice.refused[s.id]} if s.id in advice.refused else {}),
            }
            for s in advice.statements
        ],
        "candidates": fates,
        "thresholds": [
            {k: t[k] for k in ("field", "op", "value", "source")} for t in thresholds(advice.cover)
        ],
        "workload_ms": round(choice.workload_ms, 1) if choice else None,
        "estimated_saving_ms": round(choice.saved_ms, 1) if choice else None,
    }


def sql_script(advice: IndexAdvice) -> str:
    """The chosen indexes as a script to apply (`--format sql`, indexes.sql)."""
    lines = [
        "-- pgopt advise: indexes the workload's plans miss, checked on a copy.",
        "-- CONCURRENTLY: the table stays writable; run outside a transaction block.",
    ]
    for f in findings(advice):
        served = ", ".join(
            f"{s['id']} {short_query(s['query'], 60)}" for s in f["index"]["statements"]
        )
        lines += [comment(f["message"]), comment(f"  serves: {served}"), f["fix"]]
    if len(lines) == 2:
        lines.append("-- no index to add")
    return "\n".join(lines) + "\n"


def _columns_text(c: Candidate) -> str:
    keys = ", ".join(k.expr + (" DESC" if k.desc else "") for k in c.keys)
    text = f"({keys})"
    if c.include:
        text += f" INCLUDE ({', '.join(c.include)})"
    if c.predicate:
        text += f" WHERE {c.predicate}"
    if c.method != "btree":
        text = f"{c.method} {text}"
    return text


def _cut(index: dict[str, Any]) -> float:
    """The largest share of a served statement's plan cost the index takes off."""
    cuts = [1 - s["cost_after"] / s["cost_before"] for s in index["statements"] if s["cost_before"]]
    return max(cuts, default=0.0)


def _cut_text(index: dict[str, Any]) -> str:
    return f"−{_cut(index):.0%}"
