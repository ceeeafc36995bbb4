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
from ..words import flat_query, plural
from .findings import IDLE_BUCKETS
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
    """What the terminal prints too: the findings, and what a reader needs to know
    before taking "no findings" for "nothing wrong": the rules not checked and why,
    and where the sampled sessions spent their time."""
    blocks: list[Any] = []
    if doc["findings"]:
        rows = tuple(
            (
                Cell((Span(f["severity"], SEVERITY_STYLE[f["severity"]]),)),
                Cell((Span(f["rule"], Style.CODE),)),
                Cell(_message(f)),
                Cell((Span(f["proof"], proof_style(f["proof"])),)),
            )
            for f in doc["findings"]
        )
        blocks.append(Table(("severity", "rule", "finding", "proof"), rows))
        sources = {f["rule"]: _sources(f) for f in doc["findings"]}
        blocks.append(
            Items(
                tuple((rule, (Span(s, Style.MUTED),)) for rule, s in sources.items()),
                "thresholds",
            )
        )
    else:
        checked = plural(len(doc["rules_checked"]), "rule")
        blocks.append(Paragraph(plain(f"No findings from the {checked} checked.")))
    blocks.extend(summary_items(doc))
    if doc["not_checked"]:
        blocks.append(
            Items(
                tuple((n["rule"], plain(n["reason"])) for n in doc["not_checked"]),
                title="not checked",
            )
        )
    blocks.append(_top_waits(doc["evidence"]))
    return Section("Findings", tuple(blocks))


def _message(f: dict[str, Any]) -> Inline:
    if "caveat" not in f:
        return plain(f["message"])
    return (Span(f["message"]), Span(f" ({f['caveat']})", Style.MUTED))


TOP_WAITS = 3


def _top_waits(evidence: dict[str, Any]) -> Items | Paragraph:
    """The largest shares of active time (as the rules' wait shares count it: idle
    sessions left out), and how much of the sample was idle in a transaction."""
    shares = evidence["waits"]
    active = {k: v for k, v in shares.items() if k.lower() not in IDLE_BUCKETS}
    total = sum(active.values())
    if not total:
        return Paragraph(plain("The sample saw no active session: nothing to judge waits by."))
    top = sorted(active.items(), key=lambda kv: -kv[1])[:TOP_WAITS]
    said = ", ".join(f"{event} {share / total:.0%}" for event, share in top)
    idle = sum(v for k, v in shares.items() if k.lower() == "idleintransaction")
    tail = f"; idle in a transaction: {idle:.0%} of all samples" if idle >= 0.01 else ""
    said = f"{said} of the other sessions' active time{tail}"
    return Items((("waits", plain(said)),), "sampled")


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
    if "caveat" in f:
        items.append(("caveat", plain(f["caveat"])))
    items.extend(statement_items(f))
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


def statement_items(f: dict[str, Any]) -> list[tuple[str, Inline]]:
    """The statements behind a finding, each with what it does there."""
    return [
        ("statement", (Span(flat_query(s["query"], 120), Style.CODE), Span(f": {s['said']}")))
        for s in f.get("statements", [])
    ]


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
