"""The report of one `pgopt advise` run as the labs' report document (pure).

Built from advice.json alone, so the terminal summary, report.md and report.html
say the same things and can be rendered again without the server: the findings,
most severe first, each with its evidence against its thresholds and where they
come from, its fix, and its proof; what limited the evidence; the rules that
could not be checked and why; the wait events sampled.
"""

from __future__ import annotations

import shlex
from typing import Any

from ..report.blocks import (
    Cell,
    Code,
    Document,
    Inline,
    Items,
    Paragraph,
    Section,
    Span,
    Style,
    Table,
    plain,
)
from ..report.fmt import format_value
from ..words import plural
from .index_report import index_blocks, index_sections, summary_items

SEVERITY_STYLE = {"critical": Style.BAD, "warning": Style.WARN, "info": Style.PLAIN}
LEDE = (
    "A read-only look at a live server: its catalogs, cumulative statistics and a "
    "sample of its sessions' wait events, judged by rules whose thresholds say where "
    "they come from. A fix is proven only by measurement (--prove)."
)


def advice_report(doc: dict[str, Any]) -> Document:
    e = doc["evidence"]
    facts = [
        f"PostgreSQL {e['server_version_num'] // 10000}",
        f"sample {e['sample_s']:g} s",
        f"{plural(len(doc['rules_checked']), 'rule')} checked",
        f"{plural(len(doc['findings']), 'finding')}",
        doc["started_at"],
    ]
    return Document(
        title=f"advise: {doc['server']}",
        lede=LEDE,
        facts=plain(" · ".join(facts)),
        banners=tuple((Style.WARN, plain(w)) for w in doc["warnings"]),
        summary=_summary(doc),
        sections=(
            *(_finding(i, f) for i, f in enumerate(doc["findings"], start=1)),
            *index_sections(doc),
            *_not_checked(doc),
            _waits(e),
            Section("Reproduce", (Code(_command(doc), "sh"),)),
        ),
        schema=doc["schema"],
        source="advice.json",
    )


def _command(doc: dict[str, Any]) -> str:
    """The command line (kept since advice.json had it; older files: rebuilt)."""
    return doc.get("command") or f"pgopt advise --dsn {shlex.quote(doc['server'])}"


def proof_style(proof: str) -> Style:
    if proof.startswith("proven faster"):
        return Style.GOOD
    if proof.startswith("slower"):
        return Style.BAD
    if proof.startswith(("no measurable effect", "not proven")):
        return Style.WARN
    return Style.MUTED


def _summary(doc: dict[str, Any]) -> Section:
    if not doc["findings"]:
        return Section("Findings", (Paragraph(plain("No findings.")), *summary_items(doc)))
    rows = tuple(
        (
            Cell((Span(f["severity"], SEVERITY_STYLE[f["severity"]]),)),
            Cell((Span(f["rule"], Style.CODE),)),
            Cell(plain(f["message"])),
            Cell((Span(f["proof"], proof_style(f["proof"])),)),
        )
        for f in doc["findings"]
    )
    blocks: list[Any] = [Table(("severity", "rule", "finding", "proof"), rows)]
    sources = {f["rule"]: _sources(f) for f in doc["findings"]}
    blocks.append(
        Items(tuple((rule, (Span(s, Style.MUTED),)) for rule, s in sources.items()), "thresholds")
    )
    blocks.extend(summary_items(doc))
    if doc["not_checked"]:
        blocks.append(
            Items(
                tuple((n["rule"], plain(n["reason"])) for n in doc["not_checked"]),
                title="not checked",
            )
        )
    return Section("Findings", tuple(blocks))


def _sources(f: dict[str, Any]) -> str:
    return "; ".join(t["source"] for t in f["thresholds"]) or f.get("source", "")


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return format_value(value)


def _finding(index: int, f: dict[str, Any]) -> Section:
    items: list[tuple[str, Inline]] = [("finding", plain(f["message"]))]
    for t in f["thresholds"]:
        op = "|x| <" if t["op"] == "abs<" else t["op"]
        items.append(
            (
                t["field"],
                (
                    Span(_number(t["actual"]), Style.STRONG),
                    Span(f" (threshold {op} {_number(t['value'])}: "),
                    Span(t["source"], Style.MUTED),
                    Span(")"),
                ),
            )
        )
    if "source" in f:
        items.append(("rule", plain(f["source"])))
    if "seed" in f:
        items.append(("article", (Span(f["seed"], Style.CODE),)))
    items.append(("fix", (Span(f["fix"], Style.CODE),)))
    if "experiment" in f:
        items.append(("experiment", plain(f["experiment"])))
    items.append(("proof", (Span(f["proof"], proof_style(f["proof"])),)))
    if "proof_assumption" in f:
        items.append(("assumed", plain(f["proof_assumption"])))
    if "proof_run" in f:
        items.append(("proof run", (Span(f["proof_run"], Style.CODE),)))
    extra = index_blocks(f["index"]) if "index" in f else []
    return Section(
        f"{index}. {f['severity']}: {f['title']}",
        (Items(tuple(items)), *extra),
        level=3,
        anchor=f"finding-{index}",
    )


def _not_checked(doc: dict[str, Any]) -> list[Section]:
    if not doc["not_checked"]:
        return []
    rows = tuple(
        (Cell((Span(n["rule"], Style.CODE),)), Cell(plain(n["reason"]))) for n in doc["not_checked"]
    )
    return [Section("Not checked", (Table(("rule", "why"), rows),))]


def _waits(evidence: dict[str, Any]) -> Section:
    waits = sorted(evidence["waits"].items(), key=lambda kv: -kv[1])[:10]
    if not waits:
        return Section("Wait events sampled", (Paragraph(plain("No other session was seen.")),))
    rows = tuple((Cell(plain(event)), Cell(plain(f"{share:.0%}"))) for event, share in waits)
    caption = "Share of the samples of the server's other active sessions (not pgopt's own)."
    return Section(
        "Wait events sampled",
        (Table(("wait event", "share"), rows, numeric=frozenset({1}), caption=caption),),
    )
