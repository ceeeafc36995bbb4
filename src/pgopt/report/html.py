"""report.html: the report document as one self-contained page, with its plots.

The page fetches nothing: styles are inline (page.css), plots are inline SVG, and
a Content-Security-Policy forbids any network access or script. Every piece of
text from a lab file or the database goes through `html.escape`.
"""

from __future__ import annotations

from html import escape
from importlib.resources import files

from .. import __version__
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
    Style,
    Table,
)
from .document import build_document
from .figure import Plot, color
from .plots import all_plots

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = files(__package__).joinpath("page.css").read_text()
_TONES = {Style.GOOD: "good", Style.BAD: "bad", Style.WARN: "warn", Style.MUTED: "muted"}


def e(value: object) -> str:
    """Escaped text: the one way lab and database text reaches the page."""
    return escape(str(value), quote=True)


def inline(spans: Inline) -> str:
    out = []
    for span in spans:
        body = e(span.text).replace("\n", "<br>")
        if span.style is Style.CODE:
            out.append(f"<code>{body}</code>")
        elif span.style is Style.STRONG:
            out.append(f"<strong>{body}</strong>")
        elif span.style in _TONES:
            out.append(f'<span class="{_TONES[span.style]}">{body}</span>')
        else:
            out.append(body)
    return "".join(out)


def _swatch(index: int | None) -> str:
    if index is None:
        return ""
    return f'<span class="swatch" style="background:{color(index)}"></span>'


def _cell(tag: str, cell: Cell, numeric: bool) -> str:
    cls = ' class="num"' if numeric else ""
    return f"<{tag}{cls}>{_swatch(cell.swatch)}{inline(cell.spans)}</{tag}>"


def _table(table: Table) -> str:
    num = ' class="num"'
    head = "".join(
        f"<th{num if i in table.numeric else ''}>{e(h)}</th>" for i, h in enumerate(table.header)
    )
    body = "".join(
        "<tr>" + "".join(_cell("td", c, i in table.numeric) for i, c in enumerate(row)) + "</tr>"
        for row in table.rows
    )
    html = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if table.caption:
        html += f'<p class="caption">{e(table.caption)}</p>'
    if table.folded:
        return f"<details><summary>{e(table.title)}</summary>{html}</details>"
    return f"<h3>{e(table.title)}</h3>{html}" if table.title else html


def _block(block: Block, plots: list[Plot]) -> str:
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Items):
        title = f"<p><strong>{e(block.title)}:</strong></p>" if block.title else ""
        if all(label for label, _ in block.items):
            pairs = "".join(
                f"<dt>{e(label)}</dt><dd>{inline(value)}</dd>" for label, value in block.items
            )
            return f"{title}<dl>{pairs}</dl>"
        return title + "<ul>" + "".join(f"<li>{inline(v)}</li>" for _, v in block.items) + "</ul>"
    if isinstance(block, Paragraph):
        cls = ' class="caption"' if block.muted else ""
        return f"<p{cls}>{inline(block.spans)}</p>"
    if isinstance(block, Code):
        return f"<pre><code>{e(block.text)}</code></pre>"
    if isinstance(block, SideBySide):
        columns = "".join(
            f"<div><h4>{e(heading)}</h4><pre><code>{e(body)}</code></pre></div>"
            for heading, body in block.columns
        )
        return f'<div class="side-by-side">{columns}</div>'
    if isinstance(block, Plots):
        return _plots(plots)
    raise TypeError(block)


def _plots(plots: list[Plot]) -> str:
    figures = "".join(
        f'<figure id="plot-{e(p.key)}"><h3>{e(p.title)}</h3>{p.svg}'
        f"<figcaption>{e(p.caption)}</figcaption></figure>"
        for p in plots
    )
    return f'<div class="plots">{figures}</div>'


def _section(section: Section, plots: list[Plot]) -> str:
    body = "\n".join(_block(b, plots) for b in section.blocks)
    if section.level == 2:
        return f"<h2>{e(section.title)}</h2>\n{body}" if body or not section.blocks else ""
    anchor = f' id="{e(section.anchor)}"' if section.anchor else ""
    return (
        f'<section class="step"{anchor}><h3>{_swatch(section.swatch)}{e(section.title)}</h3>'
        f"\n{body}\n</section>"
    )


def render_document(doc: Document, plots: list[Plot]) -> str:
    body = [f"<h1>{e(doc.title)}</h1>"]
    if doc.lede:
        body.append(f'<p class="lede">{e(doc.lede)}</p>')
    body.append(f'<p class="meta">{inline(doc.facts)}</p>')
    for style, spans in doc.banners:
        tone = {Style.BAD: " bad", Style.GOOD: " good"}.get(style, "")
        body.append(f'<p class="banner{tone}">{inline(spans)}</p>')
    body += [s for s in (_section(x, plots) for x in (doc.summary, *doc.sections)) if s]
    body.append(
        f"<footer>Rendered by pgopt {e(__version__)} from {e(doc.source)} ({e(doc.schema)}). "
        "This page loads nothing from the network.</footer>"
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>pgopt · {e(doc.title)}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            "<main>",
            *body,
            "</main>",
            "</body>",
            "</html>",
            "",
        ]
    )


def render_html(result: LabResult) -> str:
    return render_document(build_document(result), all_plots(result))
