"""The index advisor in advise's report (pure, from advice.json): for each index to
add, the statements it serves with the planner's cost and plan before and after
(side by side), its proof per statement; then every candidate weighed, with why
it was chosen, rejected or already covered, and the statements not planned."""

from __future__ import annotations

from typing import Any

from ..report.blocks import (
    Block,
    Cell,
    Items,
    Paragraph,
    Section,
    SideBySide,
    Span,
    Style,
    Table,
    plain,
)
from ..report.fmt import format_bytes
from ..words import flat_query as short_query

STATUS_STYLE = {"chosen": Style.GOOD, "rejected": Style.MUTED, "covered": Style.MUTED}


def index_blocks(index: dict[str, Any]) -> list[Block]:
    """An index to add: its statements, its first statement's plans, its proof."""
    rows = tuple(
        (
            Cell((Span(s["id"], Style.CODE),)),
            Cell(plain(short_query(s["query"], 60))),
            Cell(plain(f"{s['calls']:,}")),
            Cell(plain(f"{s['cost_before']:,.0f} → {s['cost_after']:,.0f}")),
            Cell(plain(s["plan_change"] or "same plan")),
        )
        for s in index["statements"]
    )
    size = (
        f"{format_bytes(index['bytes_on_copy'])} and {index['build_s_on_copy']:.2f} s to build "
        f"on the copy (estimated from pg_stats: {format_bytes(index['estimated_bytes'] or 0)})"
    )
    blocks: list[Block] = [
        Paragraph(plain(size)),
        Table(("statement", "query", "calls", "plan cost", "plan"), rows, numeric=frozenset({2})),
    ]
    first = index["statements"][0] if index["statements"] else None
    if first is not None:
        blocks.append(
            SideBySide(
                (
                    (f"{first['id']} as is", "\n".join(first["plan_before"])),
                    (f"{first['id']} with the index", "\n".join(first["plan_after"])),
                )
            )
        )
    proof = index.get("proof")
    if proof:
        blocks.append(Paragraph(plain(f"left out of the set: {proof['left_out']}")))
        blocks.extend(effects_blocks(proof["statements"], proof.get("wal_bytes_per_tx", {})))
    return blocks


def effects_blocks(effects: list[dict[str, Any]], wal: dict[str, Any]) -> list[Block]:
    """Per statement of the replayed workload: ms per call without and with the set."""
    if not effects:
        return []
    rows = tuple(
        (
            Cell(plain(short_query(e["query"], 60))),
            Cell(plain("write" if e["writes"] else "read")),
            Cell(plain(f"{e['ms_per_call_a']:.3f}")),
            Cell(plain(f"{e['ms_per_call_b']:.3f}")),
            Cell((Span(f"×{e['ratio']:.2f}", _ratio_style(e["ratio"])),)),
        )
        for e in effects
    )
    caption = "Median over the runs of pg_stat_statements' time per call, on the copy."
    if wal.get("a") and wal.get("b"):
        caption += f" WAL per transaction: {wal['a']:,.0f} B as is, {wal['b']:,.0f} B with the set."
    return [
        Table(
            ("statement", "kind", "ms/call as is", "ms/call with", "with / as is"),
            rows,
            numeric=frozenset({2, 3, 4}),
            caption=caption,
        )
    ]


def _ratio_style(ratio: float) -> Style:
    return Style.GOOD if ratio < 0.9 else Style.BAD if ratio > 1.1 else Style.PLAIN


def index_sections(doc: dict[str, Any]) -> list[Section]:
    """The candidates weighed and the statements not planned."""
    section = doc.get("indexes")
    if not section:
        return []
    blocks: list[Block] = [
        Paragraph(plain(f"Statements from {section['source']}; {section['planner']}."))
    ]
    if section["candidates"]:
        rows = tuple(
            (
                Cell((Span(c["status"], STATUS_STYLE.get(c["status"], Style.WARN)),)),
                Cell((Span(c["ddl"], Style.CODE),)),
                Cell(plain(c["why"])),
            )
            for c in section["candidates"]
        )
        blocks.append(Table(("", "candidate", "why"), rows))
    refused = [s for s in section["statements"] if "refused" in s]
    if refused:
        rows = tuple(
            (
                Cell((Span(s["id"], Style.CODE),)),
                Cell(plain(short_query(s["query"], 60))),
                Cell(plain(s["refused"])),
            )
            for s in refused
        )
        blocks.append(Table(("statement", "query", "not planned"), rows))
    thresholds = tuple(
        (
            Cell((Span(t["field"], Style.CODE),)),
            Cell(plain(f"{t['op']} {t['value']}")),
            Cell(plain(t["source"])),
        )
        for t in section["thresholds"]
    )
    blocks.append(Table(("threshold", "", "source"), thresholds))
    proof = section.get("proof")
    if proof:
        blocks.append(Paragraph(plain(f"The set, measured: {proof['set']}.")))
        for added in proof["added"]:
            blocks.append(Paragraph(plain(f"{added['ddl']}: {added['verdict']}")))
        blocks.extend(effects_blocks(proof["statements"], proof.get("wal_bytes_per_tx", {})))
    return [Section("Indexes weighed", tuple(blocks))]


def summary_items(doc: dict[str, Any]) -> list[Block]:
    """For the summary (the terminal): each candidate not chosen and each statement
    not planned, with why, so "no finding" never hides what was weighed."""
    section = doc.get("indexes")
    if not section:
        return []
    items = [
        (c["status"], plain(f"{_shape(c['ddl'])}: {c['why']}"))
        for c in section["candidates"]
        if c["status"] != "chosen"
    ]
    items += [
        (s["id"], plain(f"{short_query(s['query'], 50)}: not planned, {s['refused']}"))
        for s in section["statements"]
        if "refused" in s
    ]
    if not items:
        return []
    title = f"missing-index: {len(section['statements'])} statements weighed ({section['source']})"
    return [Items(tuple(items), title)]


def _shape(ddl: str) -> str:
    """`public.orders USING btree (customer_id)` out of a CREATE INDEX statement."""
    _, _, rest = ddl.partition(" ON ")
    return rest.rstrip(";") or ddl
