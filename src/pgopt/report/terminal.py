"""What the terminal shows: the summary printed when a lab finishes (the report
document's summary section), and `pgopt compare`'s table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from ..analysis.verdicts import ratio_of
from ..model.result import LabResult
from ..words import plural
from .blocks import VERDICT_STYLE, Block, Document, Inline, Items, Paragraph, Style, Table
from .compare import Comparison
from .document import build_document
from .fmt import format_rate, format_ratio, format_verdict_word

STYLES = {
    Style.STRONG: "bold",
    Style.GOOD: "bold green",
    Style.BAD: "bold red",
    Style.WARN: "yellow",
    Style.MUTED: "dim",
}


def inline(spans: Inline) -> Text:
    text = Text()
    for span in spans:
        text.append(span.text, style=STYLES.get(span.style, ""))
    return text


def rich_table(table: Table) -> RichTable:
    out = RichTable(
        title=table.title if table.title else None,
        caption=table.caption if table.caption else None,
        title_justify="left",
        caption_justify="left",
    )
    for i, header in enumerate(table.header):
        out.add_column(header, justify="right" if i in table.numeric else "left")
    for row in table.rows:
        out.add_row(*(inline(cell.spans) for cell in row))
    return out


def _print_block(console: Console, block: Block) -> None:
    if isinstance(block, Table):
        console.print(rich_table(block))
    elif isinstance(block, Items):
        if block.title:
            console.print(Text(block.title, style="bold"))
        for label, value in block.items:
            line = Text("  ")
            if label:
                line.append(f"{label}: ", style="dim")
            console.print(line + inline(value))
    elif isinstance(block, Paragraph):
        console.print(inline(block.spans))


def print_summary(console: Console, result: LabResult) -> None:
    print_document_summary(console, build_document(result))


def print_document_summary(console: Console, doc: Document) -> None:
    """A document's title, facts, banners and summary section."""
    console.print(Text(doc.title, style="bold"))
    console.print(inline(doc.facts), style="dim")
    for style, spans in doc.banners:
        console.print(inline(spans), style=STYLES.get(style, ""))
    for block in doc.summary.blocks:
        _print_block(console, block)


def comparison_table(comparison: Comparison, a_label: str, b_label: str) -> RichTable:
    """The terminal table of `pgopt compare`: A, B, B/A with its 95% interval, verdict."""
    table = RichTable(
        title=f"{comparison.lab}: B = {b_label} vs A = {a_label}",
        caption="medians; B/A: geometric-mean ratio with its 95% interval (Welch's t on "
        f"the logs); faster/slower at 5% after Benjamini-Hochberg across "
        f"{plural(sum(1 for s in comparison.steps if s.decision), 'step')}; no-change: the 90% "
        f"interval within ±{comparison.margin:.0%}",
        title_justify="left",
        caption_justify="left",
    )
    table.add_column("step")
    table.add_column(f"A {comparison.unit}", justify="right")
    table.add_column(f"B {comparison.unit}", justify="right")
    table.add_column("B / A", justify="right")
    table.add_column("verdict")
    for step in comparison.steps:
        ratio = ratio_of(step.decision) if step.decision else None
        table.add_row(
            step.name,
            format_rate(step.a_median),
            format_rate(step.b_median),
            format_ratio(ratio),
            Text(
                format_verdict_word(ratio, step.verdict),
                style=STYLES.get(VERDICT_STYLE[step.verdict], ""),
            ),
        )
    return table
