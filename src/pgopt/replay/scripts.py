"""The replayed statements as pgbench scripts (pure): each statement a block (its
draws, then its text tagged after its first word, `SELECT /* pgopt q01 */ ...`, by
which the replay's pg_stat_statements row is found again: pgbench drops leading
comments), the blocks weighted by their calls, as single-statement scripts
(autocommit) or transactions of the source's statements per commit, drawn in
advance (a seeded shuffle: the same each time) and picked by pgbench."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..markup import comment
from ..source.catalog import SourceStatement
from ..words import plural
from .param_binding import ColumnUse
from .selection import Candidate
from .tag import tagged
from .values.draws import Draw, FromPool, RangeDraw, from_the_data, render, rows_per_value
from .values.variants import chosen_by, is_text, variants

MAX_WEIGHT = 100_000
# PostgreSQL 18's pg_stat_statements keeps a list of constants as its first one and
# this comment: `IN ($1 /*, ... */)`; how long the list was is not kept
SQUASHED = re.compile(r"\$(\d+) /\*, \.\.\. \*/")
MAX_LIST = 1000


@dataclass(frozen=True)
class Block:
    """One statement as the replay runs it: its draws, then its tagged text."""

    name: str  # q01, q02, ...: the tag in its text
    statement: SourceStatement
    time_share: float
    lines: tuple[str, ...]
    assumptions: tuple[str, ...]  # how each parameter is drawn, and what that assumes
    unverified: str = ""  # a guess the fidelity check cannot see through, said
    # which rows it finds are drawn from the data, not the calls (a value it writes is
    # work by its size, not by which it is: not counted)
    values_from_data: bool = False


@dataclass(frozen=True)
class ScriptText:
    name: str  # the file is NAME.sql
    weight: int
    text: str


def block(
    name: str,
    candidate: Candidate,
    draws: dict[int, Draw],
    notes: dict[int, str],
    export: tuple[int, str] | None = None,
    suffix: str = "",
) -> Block:
    """The statement's lines: where it comes from, each parameter's rule, its draws and
    its tagged text; `export` (n, variable): $n's value kept in `variable` as well,
    for the statement that follows it in the same transaction; `suffix`: a clause
    the replay adds to the statement (said in its notes)."""
    st = candidate.statement
    lines = [
        comment(
            f"{name}: {candidate.time_share:.1%} of the source's execution time, "
            f"{plural(st.calls, 'call')}, {st.ms_per_call:.3f} ms and {st.rows_per_call:.3g} "
            f"rows each (pg_stat_statements queryid {st.queryid})"
        ),
    ]
    values: dict[int, str] = {}
    for n in sorted(notes):
        lines.append(comment(f"${n}: {notes[n]}"))  # names of the source's, whatever they hold
    for n, draw in sorted(draws.items()):
        if is_text(draw):
            continue  # written out per variant, below
        drawn, values[n] = render(n, draw)
        lines += drawn
        if isinstance(draw, RangeDraw):
            values[draw.high] = f":pgopt_p{draw.high}"
    if export is not None:
        lines.append(f"\\set {export[1]} {values[export[0]]}")
    lists = squashed_lists(st, draws)
    for n, length in lists.items():
        lines.insert(
            1,
            comment(
                f"${n}: a list pg_stat_statements squashed: {length} values a call, "
                f"so that a call reads the source's {st.rows_per_call:.3g} rows"
            ),
        )
        if is_text(draws[n]):
            continue
        items = [values[n]]
        for i in range(2, length + 1):
            drawn, value = render(f"{n}_{i}", draws[n])
            lines += drawn
            items.append(value)
        values[n] = ", ".join(items)
    bodies = []
    for weight, chosen in variants(name, draws, lists) or [(1.0, {})]:
        each = {**values, **chosen}
        for n, use in candidate.shape.params.items():
            if isinstance(use, ColumnUse) and use.applied and n in each:
                each[n] = use.applied.format(each[n])  # lower(email) = lower('drawn')
        bodies.append((weight, f"{tagged(name, _filled(st.query, each).rstrip(';'))}{suffix};"))
    lines += chosen_by("pgopt_v", bodies)
    guessed = [n for n, d in sorted(draws.items()) if isinstance(d, RangeDraw) and d.assumed]
    unverified = (
        "the width of its range ($"
        + ", $".join(map(str, guessed))
        + ") is a guess that the source's rows and blocks a call cannot confirm: a change "
        "to how it finds its rows (an index) is not measured faithfully"
        if guessed
        else ""
    )
    return Block(
        name,
        st,
        candidate.time_share,
        tuple(lines),
        tuple(notes[n] for n in sorted(notes)),
        unverified,
        any(from_the_data(d) for n, d in draws.items() if not _written(candidate, n)),
    )


def _written(candidate: Candidate, n: int) -> bool:
    """Whether $n is a value the statement writes (what is written, not which rows)."""
    use = candidate.shape.params.get(n)
    return isinstance(use, ColumnUse) and use.written


def _filled(query: str, values: dict[int, str]) -> str:
    """`query` with each `$n` (a squashed list's too) replaced by `values[n]`."""
    body = SQUASHED.sub(lambda m: f"${m.group(1)}", query.strip())
    return re.sub(r"\$(\d+)(?!\d)", lambda m: values[int(m.group(1))], body)


def squashed_lists(statement: SourceStatement, draws: dict[int, Draw]) -> dict[int, int]:
    """$n -> how many values to send for each list pg_stat_statements squashed: as many
    as make a call read the source's rows per call (at least one)."""
    out = {}
    for match in SQUASHED.finditer(statement.query):
        n = int(match.group(1))
        draw = draws.get(n)
        if not isinstance(draw, FromPool):
            continue
        per_value = rows_per_value(draw.pool)
        wanted = statement.rows_per_call / per_value if per_value > 0 else 1
        out[n] = max(1, min(MAX_LIST, round(wanted)))
    return out


@dataclass(frozen=True)
class Choice:
    """What one draw of a transaction runs: a statement, or a pair that goes together
    (a DELETE of a key, then the INSERT of it)."""

    name: str
    calls: int
    lines: tuple[str, ...]
    statements: int = 1


def choices(blocks: list[Block], pairs: dict[str, str]) -> list[Choice]:
    """The blocks as choices; `pairs`: a DELETE's block name -> its INSERT's."""
    by_name = {b.name: b for b in blocks}
    followers = set(pairs.values())
    out = []
    for b in blocks:
        if b.name in followers:
            continue
        if b.name in pairs:
            insert = by_name[pairs[b.name]]
            name = f"{b.name}_{insert.name}"
            out.append(Choice(name, b.statement.calls, b.lines + insert.lines, 2))
        else:
            out.append(Choice(b.name, b.statement.calls, b.lines))
    return out


def scaled(counts: list[int]) -> list[int]:
    """Counts as pgbench weights: their proportions, the largest at most MAX_WEIGHT."""
    scale = min(1.0, MAX_WEIGHT / max(counts, default=1))
    return [max(1, round(n * scale)) for n in counts]


def weights_of(items: list[Choice]) -> list[int]:
    return scaled([c.calls for c in items])


def pick(items: list[Choice], weights: list[int]) -> list[str]:
    """The lines that run one of `items`, drawn by `weights` (one item: its lines)."""
    if len(items) == 1:
        return list(items[0].lines)
    lines = [f"\\set pgopt_s random(1, {sum(weights)})"]
    running = 0
    for i, (choice, weight) in enumerate(zip(items, weights, strict=True)):
        running += weight
        keyword = "\\if" if i == 0 else "\\elif"
        lines.append(f"{keyword} :pgopt_s <= {running}" if i < len(items) - 1 else "\\else")
        lines += choice.lines
    return [*lines, "\\endif"]


def autocommit_scripts(items: list[Choice]) -> tuple[ScriptText, ...]:
    """One script a choice, weighted by its calls: each statement its own transaction."""
    return tuple(
        ScriptText(c.name, weight, "\n".join(c.lines) + "\n")
        for c, weight in zip(items, weights_of(items), strict=True)
    )


TRANSACTIONS = 32  # transactions drawn in advance, each a script (pgbench takes 128)
SEED = 56  # the draw of their order: the same workload each time
DRAWN = "transaction_"  # their names: transaction_01 to transaction_32


def transaction_scripts(
    items: list[Choice], per_commit: float
) -> tuple[tuple[ScriptText, ...], int]:
    """TRANSACTIONS scripts of BEGIN, as many draws as make `per_commit` statements on
    average (each draw a choice by its calls), COMMIT, one picked a transaction by
    pgbench's script weights; and that number of draws. Drawn here, not at each step:
    pgbench steps over every line of an `\\if` chain it does not take, which cost it
    80-90 µs a transaction for sixteen steps among 36 statements (bench/README.md)."""
    weights = weights_of(items)
    total = sum(weights)
    mean = sum(w * c.statements for w, c in zip(weights, items, strict=True)) / total
    slots = max(1, round(per_commit / mean))
    whole, rest = cells_of(weights, TRANSACTIONS * slots)
    order: list[int | None] = [i for i, n in enumerate(whole) for _ in range(n)]
    order += [None] * (TRANSACTIONS * slots - len(order))
    random.Random(SEED).shuffle(order)
    left = [(c, r) for c, r in zip(items, rest, strict=True) if r]
    spare = pick([c for c, _ in left], [r for _, r in left]) if left else []
    scripts = []
    for t in range(TRANSACTIONS):
        cells = order[t * slots : (t + 1) * slots]
        lines = [
            comment(
                f"transaction {t + 1} of {TRANSACTIONS}, drawn in advance: {slots} draws "
                f"({slots * mean:.3g} statements on average, the source's commits had "
                f"{per_commit:.3g}); over the {TRANSACTIONS}, each statement takes its share "
                "of the source's calls (a draw that chooses at run time takes what is left over)"
            ),
            "BEGIN;",
        ]
        for cell in cells:
            lines += spare if cell is None else items[cell].lines
        lines.append("COMMIT;")
        scripts.append(ScriptText(f"{DRAWN}{t + 1:02d}", 1, "\n".join(lines) + "\n"))
    return tuple(scripts), slots


def cells_of(weights: list[int], cells: int) -> tuple[list[int], list[int]]:
    """The `cells` draws of the transactions shared by `weights`: each choice's whole
    cells (its share, rounded down), and what its share leaves over, in 1/sum(weights)
    of a cell. The cells left (fewer than the choices) pick by those leftovers, so a
    choice's expected cells are exactly its share of `cells`."""
    total = sum(weights)
    whole = [cells * w // total for w in weights]
    return whole, [cells * w - n * total for w, n in zip(weights, whole, strict=True)]
