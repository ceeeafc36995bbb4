"""Text values as the server receives them from an application (pure): pgbench's
variables hold numbers only, so a statement whose parameters draw text (a string
column's values, a captured call's values or arrays) is written once per variant,
each variant with its values as literals, and pgbench picks one per call (`\\if`):
the server parses one value a parameter, as it does the application's call.

Before, the pick was a `CASE` over every value inside the statement, which the server
parsed and folded on every call: on sysbench's oltp_write_only (an INSERT of two
strings drawn from 100 of 120 characters each) that was some 300 µs of the server's
CPU a transaction the application does not spend, and the replay's ratio for
synchronous_commit = off came out 30-40% under sysbench's own (bench/README.md).

The variants are drawn once, with a seed of their own (the block's name): VARIANTS
values of each text parameter, by its draw's weights; a captured call's parameters
that go together (`FromCalls`) one call a variant, all its calls (100 at most).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from ...sqltree import quote_literal
from .draws import (
    DRAW,
    INTEGER_TYPES,
    ArrayOf,
    Draw,
    FromCalls,
    FromPool,
    cumulative_cuts,
    sample,
)

VARIANTS = 32  # written out per statement whose parameters draw text


def is_text(draw: Draw) -> bool:
    """Whether `draw` gives text, which pgbench cannot hold in a variable."""
    if isinstance(draw, FromCalls):
        return True
    if isinstance(draw, ArrayOf):
        return isinstance(draw.element, FromPool) and _text_pool(draw.element)
    return isinstance(draw, FromPool) and _text_pool(draw)


def _text_pool(draw: FromPool) -> bool:
    return draw.type not in INTEGER_TYPES


def variants(
    seed: str, draws: Mapping[int, Draw], repeats: Mapping[int, int]
) -> list[tuple[float, dict[int, str]]]:
    """Per variant, its weight and the literal each text parameter of `draws` stands
    for; `repeats`: n -> how many values a list of $n holds (joined with commas). One
    text parameter of at most VARIANTS values: each value, at its weight; else drawn."""
    text = {n: d for n, d in draws.items() if is_text(d)}
    if not text:
        return []
    if len(text) == 1:
        ((n, draw),) = text.items()
        if (
            isinstance(draw, FromPool)
            and len(draw.pool.values) <= VARIANTS
            and repeats.get(n, 1) == 1
        ):
            return [(w, {n: _literal(v, draw.type)}) for v, w in draw.pool.values]
    calls = [d for d in text.values() if isinstance(d, FromCalls)]
    count = len(calls[0].values) if calls else VARIANTS
    rng = random.Random(seed)
    out = []
    for i in range(count):
        chosen = {}
        for n, draw in sorted(text.items()):
            if isinstance(draw, FromCalls):
                chosen[n] = _literal(draw.values[i], None)  # one call's, together
                continue
            items = [_one(draw, rng) for _ in range(repeats.get(n, 1))]
            chosen[n] = ", ".join(items)
        out.append((1.0, chosen))
    return out


def _one(draw: Draw, rng: random.Random) -> str:
    if isinstance(draw, ArrayOf):
        assert isinstance(draw.element, FromPool)
        element = draw.element
        items = [_literal(sample(element, rng)[0], element.type) for _ in range(draw.length)]
        return f"ARRAY[{', '.join(items)}]"
    assert isinstance(draw, FromPool)
    return _literal(sample(draw, rng)[0], draw.type)


def _literal(value: object, type_name: str | None) -> str:
    if value is None:
        return "NULL"
    return f"{quote_literal(str(value))}::{type_name}" if type_name else quote_literal(str(value))


def chosen_by(variable: str, bodies: list[tuple[float, str]]) -> list[str]:
    """pgbench lines that run one of `bodies`, each drawn at its weight by `variable`."""
    if len(bodies) == 1:
        return [bodies[0][1]]
    cuts = cumulative_cuts([w for w, _ in bodies])
    lines = [f"\\set {variable} random(1, {DRAW})"]
    last = 0
    for (_, body), cut in zip(bodies, cuts, strict=True):
        if cut <= last:
            continue  # a weight that rounds away
        if last == 0:
            lines.append(f"\\if :{variable} <= {cut}")
        elif cut < DRAW:
            lines.append(f"\\elif :{variable} <= {cut}")
        else:
            lines.append("\\else")
        lines.append(body)
        last = cut
    lines.append("\\endif")
    return lines
