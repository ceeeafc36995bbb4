"""The replayed statements as pgbench scripts (pure): each statement a block (its
draws, then its text tagged after its first word, `SELECT /* pgopt q01 */ ...`, by
which the replay's pg_stat_statements row is found again: pgbench drops leading
comments), the blocks weighted by their calls, as single-statement scripts
(autocommit) or one transaction script of the source's statements per commit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..words import plural
from .catalog import SourceStatement
from .draws import Draw, Span, render

if TYPE_CHECKING:
    from .synthesize import Candidate

MAX_WEIGHT = 100_000


@dataclass(frozen=True)
class Block:
    """One statement as the replay runs it: its draws, then its tagged text."""

    name: str  # q01, q02, ...: the tag in its text
    statement: SourceStatement
    time_share: float
    lines: tuple[str, ...]
    assumptions: tuple[str, ...]  # how each parameter is drawn, and what that assumes


@dataclass(frozen=True)
class Script:
    name: str  # the file is NAME.sql
    weight: int
    text: str


def block(name: str, candidate: Candidate, draws: dict[int, Draw], notes: dict[int, str]) -> Block:
    st = candidate.statement
    lines = [
        f"-- {name}: {candidate.time_share:.1%} of the source's execution time, "
        f"{plural(st.calls, 'call')}, {st.ms_per_call:.3f} ms and {st.rows_per_call:.3g} rows "
        f"each (pg_stat_statements queryid {st.queryid})",
    ]
    values: dict[int, str] = {}
    for n in sorted(notes):
        lines.append(f"-- ${n}: {notes[n]}")
    for n, draw in sorted(draws.items()):
        drawn, values[n] = render(n, draw)
        lines += drawn
        if isinstance(draw, Span):
            values[draw.high] = f":pgopt_p{draw.high}"
    body = re.sub(r"\$(\d+)(?!\d)", lambda m: values[int(m.group(1))], st.query.strip())
    # the tag after the first word: pgbench drops a statement's leading comments, and
    # pg_stat_statements keeps the rest of the text as the first call sent it
    first, _, rest = body.rstrip(";").partition(" ")
    lines.append(f"{first} /* pgopt {name} */ {rest};")
    return Block(
        name, st, candidate.time_share, tuple(lines), tuple(notes[n] for n in sorted(notes))
    )


def _weights(blocks: list[Block]) -> list[int]:
    most = max((b.statement.calls for b in blocks), default=1)
    scale = min(1.0, MAX_WEIGHT / most)
    return [max(1, round(b.statement.calls * scale)) for b in blocks]


def autocommit_scripts(blocks: list[Block]) -> tuple[Script, ...]:
    """One script a statement, weighted by its calls: each its own transaction."""
    return tuple(
        Script(b.name, weight, "\n".join(b.lines) + "\n")
        for b, weight in zip(blocks, _weights(blocks), strict=True)
    )


def transaction_script(blocks: list[Block], slots: int) -> tuple[Script, ...]:
    """One script: BEGIN, `slots` statements each drawn by its calls, COMMIT."""
    weights = _weights(blocks)
    total = sum(weights)
    lines = [
        f"-- a transaction of {slots} statements, as the source's commits had on average;",
        "-- each statement drawn by its share of the source's calls",
        "BEGIN;",
    ]
    for _ in range(slots):
        lines.append(f"\\set pgopt_s random(1, {total})")
        running = 0
        for i, (block, weight) in enumerate(zip(blocks, weights, strict=True)):
            running += weight
            if len(blocks) == 1:
                lines += block.lines
                break
            keyword = "\\if" if i == 0 else "\\elif"
            lines.append(f"{keyword} :pgopt_s <= {running}" if i < len(blocks) - 1 else "\\else")
            lines += block.lines
        if len(blocks) > 1:
            lines.append("\\endif")
    lines.append("COMMIT;")
    return (Script("transaction", 1, "\n".join(lines) + "\n"),)
