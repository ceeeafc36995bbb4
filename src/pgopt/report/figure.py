"""How a figure of report.html is made: a styled matplotlib figure, returned as SVG
markup fit to sit inline in a page beside others, and the step colours.

Figures are built with matplotlib's object API (`Figure`, never pyplot): no GUI
backend is chosen and no window can open, and no global figure registry is
touched. Text stays text in the SVG (matplotlib escapes it), so labels are sharp,
searchable and safe whatever a step is called.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

# Tableau 10: distinct, colour-blind friendly, and the same step keeps its colour.
COLORS = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
WIDTH_IN = 10.0
# No RDF block: it names matplotlib's web site and the date, and nothing reads it.
_METADATA = ("Creator", "Date", "Format", "Type")


@dataclass(frozen=True)
class Plot:
    key: str
    title: str
    caption: str
    svg: str


def color(index: int) -> str:
    return COLORS[index % len(COLORS)]


@contextmanager
def figure(key: str, height_in: float) -> Iterator[tuple[Axes, list[str]]]:
    """A styled figure; the SVG markup is appended to the yielded list on exit."""
    out: list[str] = []
    style: dict[RcKeyType, Any] = {
        "svg.fonttype": "none",
        "svg.hashsalt": "pgopt",  # the same result gives the same bytes
        "text.parse_math": False,  # a '$' in a step name is text, not TeX
        "font.family": "sans-serif",
        "font.size": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.color": "#e6e6e6",
        "axes.axisbelow": True,
        "legend.frameon": False,
    }
    with matplotlib.rc_context(style):
        fig = Figure(figsize=(WIDTH_IN, height_in), layout="constrained")
        ax = fig.add_subplot()
        yield ax, out
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata=dict.fromkeys(_METADATA))
    out.append(_inline(buf.getvalue(), key))


def _inline(svg: str, key: str) -> str:
    """Make matplotlib's SVG fit inside an HTML page beside other figures.

    Drops the XML prolog and the fixed size (the SVG scales to its box), and
    prefixes every id and reference to one with `key`: matplotlib numbers ids
    per figure, so two inline figures would otherwise both have `axes_1`.
    """
    svg = svg[svg.index("<svg") :]
    head, rest = svg.split(">", 1)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)

    def prefix_ids(tag: re.Match[str]) -> str:
        text = re.sub(r'\bid="', f'id="{key}-', tag[0])
        text = re.sub(r"url\(#", f"url(#{key}-", text)
        return re.sub(r'href="#', f'href="#{key}-', text)

    # only inside tags: text content cannot hold '<', matplotlib escapes it
    return re.sub(r"<[^<>]+>", prefix_ids, f'{head} role="img">{rest}')
