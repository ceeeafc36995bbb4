"""The blocks a report document is made of: sections of tables, labelled items,
paragraphs and code, with text in styled spans (pure records)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Style(StrEnum):
    PLAIN = "plain"
    STRONG = "strong"
    CODE = "code"
    GOOD = "good"
    BAD = "bad"
    WARN = "warn"
    MUTED = "muted"


VERDICT_STYLE = {
    "faster": Style.GOOD,
    "slower": Style.BAD,
    "no-change": Style.WARN,
    "inconclusive": Style.MUTED,
    "n/a": Style.MUTED,
}


@dataclass(frozen=True)
class Span:
    text: str
    style: Style = Style.PLAIN


Inline = tuple[Span, ...]


def plain(text: object) -> Inline:
    return (Span(str(text)),)


@dataclass(frozen=True)
class Cell:
    spans: Inline
    swatch: int | None = None  # the step's colour in the plots


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric: frozenset[int] = frozenset()  # right-aligned columns
    caption: str = ""
    title: str = ""
    folded: bool = False  # details a reader opens when they want them


@dataclass(frozen=True)
class Items:
    """Labelled lines ('what changed: ...'); a label '' makes a plain bullet."""

    items: tuple[tuple[str, Inline], ...]
    title: str = ""


@dataclass(frozen=True)
class Paragraph:
    spans: Inline
    muted: bool = False


@dataclass(frozen=True)
class Code:
    text: str
    lang: str = ""


@dataclass(frozen=True)
class SideBySide:
    """Preformatted texts to read against each other, each under its heading (a
    statement's plan in two steps): side by side in HTML, one after the other in
    Markdown."""

    columns: tuple[tuple[str, str], ...]  # (heading, text)


@dataclass(frozen=True)
class Plots:
    """Where the report's plots go (rendered only where images can be shown)."""


Block = Table | Items | Paragraph | Code | SideBySide | Plots


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    level: int = 2
    anchor: str = ""
    swatch: int | None = None


@dataclass(frozen=True)
class Document:
    title: str
    lede: str
    facts: Inline  # the line under the title
    banners: tuple[tuple[Style, Inline], ...]
    summary: Section  # what the terminal prints
    sections: tuple[Section, ...]  # the rest, for Markdown and HTML
    schema: str
    source: str = "result.json"  # the file the document is rendered from
