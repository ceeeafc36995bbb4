"""The summary printed when a lab finishes: the report document's summary section."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable
from rich.text import Text

from ..model.result import LabResult
from .blocks import Block, Document, Inline, Items, Paragraph, Style, Table
from .document import build_document

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
        title=escape(table.title) if table.title else None,
        caption=escape(table.caption) if table.caption else None,
        title_justify="left",
        caption_justify="left",
    )
    for i, header in enumerate(table.header):
        out.add_column(escape(header), justify="right" if i in table.numeric else "left")
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
