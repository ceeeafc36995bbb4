"""report.md: the report document as Markdown that reads well pasted into a GitHub issue.

Text that comes from a lab file or the database is escaped, so a step title
cannot break a table or inject HTML.
"""

from __future__ import annotations

import re

from ..markup import md_code, md_escaped, md_text
from ..model.result import LabResult
from .blocks import (
    Block,
    Cell,
    Code,
    Document,
    Inline,
    Items,
    Paragraph,
    Plots,
    Section,
    SideBySide,
    Span,
    Style,
    Table,
)
from .document import build_document

_BANNER = {Style.BAD: "❌ ", Style.WARN: "", Style.GOOD: "✔ "}


def _flowing(value: str) -> str:
    """A span's text: one line, escaped, its spaces at either end kept."""
    return md_escaped(re.sub(r"\s+", " ", value))


def inline(spans: Inline, *, in_table: bool = False) -> str:
    out = []
    for span in spans:
        if not span.text.strip():
            out.append(" " if span.text else "")
            continue
        # a span's outer spaces stay outside its delimiters: CommonMark takes `**a***(b)*`
        # or `** a**` as literal asterisks
        lead = " " if span.text[0].isspace() else ""
        trail = " " if span.text[-1].isspace() else ""
        if span.style is Style.CODE:
            out.append(lead + md_code(span.text, in_table=in_table) + trail)
        elif span.style in (Style.STRONG, Style.GOOD, Style.BAD):
            out.append(f"{lead}**{md_text(span.text)}**{trail}")
        elif span.style is Style.MUTED:
            out.append(f"{lead}*{md_text(span.text)}*{trail}")
        else:
            out.append(_flowing(span.text))
    return "".join(out)


def _table(table: Table) -> list[str]:
    marks = ["---:" if i in table.numeric else "---" for i in range(len(table.header))]
    lines = [
        "| " + " | ".join(md_text(h) for h in table.header) + " |",
        "| " + " | ".join(marks) + " |",
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    if table.caption:
        lines += ["", md_text(table.caption)]
    if table.folded:
        return [
            "<details>",
            f"<summary>{md_text(table.title)}</summary>",
            "",
            *lines,
            "",
            "</details>",
        ]
    return [f"### {md_text(table.title)}", "", *lines] if table.title else lines


def _cell(cell: Cell) -> str:
    """A table cell on one line: lines of a cell joined with ' · '."""
    spans = tuple(Span(s.text.replace("\n", " · "), s.style) for s in cell.spans)
    return inline(spans, in_table=True) or " "


def _block(block: Block) -> list[str]:
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Items):
        title = [f"**{md_text(block.title)}:**", ""] if block.title else []
        return title + [
            f"- **{md_text(label)}:** {inline(value)}" if label else f"- {inline(value)}"
            for label, value in block.items
        ]
    if isinstance(block, Paragraph):
        return [inline(block.spans)]
    if isinstance(block, Code):
        return _fenced(block.text, block.lang)
    if isinstance(block, SideBySide):
        out: list[str] = []
        for heading, body in block.columns:
            out += [*([""] if out else []), f"**{md_text(heading)}**", "", *_fenced(body, "text")]
        return out
    if isinstance(block, Plots):
        return []
    raise TypeError(block)


def _section(section: Section) -> list[str]:
    blocks = [lines for lines in (_block(b) for b in section.blocks) if lines]
    if section.blocks and not blocks:
        return []  # only what Markdown cannot show (plots)
    lines = [f"{'#' * section.level} {md_text(section.title)}"]
    for block in blocks:
        lines += ["", *block]
    return lines


def render_document(doc: Document) -> str:
    lines = [f"# {md_text(doc.title)}", ""]
    if doc.lede:
        lines += [md_text(doc.lede), ""]
    lines.append(inline(doc.facts))
    for style, spans in doc.banners:
        lines += ["", f"> {_BANNER.get(style, '')}{inline(spans)}"]
    for section in (doc.summary, *doc.sections):
        rendered = _section(section)
        if rendered:
            lines += ["", *rendered]
    lines += [
        "",
        f"<sub>Rendered by pgopt from {md_text(doc.source)} ({md_text(doc.schema)}).</sub>",
    ]
    return "\n".join(lines) + "\n"


def render_markdown(result: LabResult) -> str:
    return render_document(build_document(result))


def _fenced(body: str, lang: str) -> list[str]:
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", body, fence]
