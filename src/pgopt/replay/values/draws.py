"""How each parameter of a replayed statement gets its value (pure).

pg_stat_statements keeps no values, so each $n is drawn per transaction, by the
rule its use in the statement calls for, and each rule says the assumption it
makes (the workload's README repeats it):

- a value compared with a column (`Pool`): the column's most common values at
  their frequencies and its histogram (integers uniformly within each bucket,
  other types at the bounds), or values sampled from its rows;
- the low end of a range (`RangeDraw`): drawn as above, and the high end drawn from it,
  low + width - 1, the width sized so that a call reads as many rows as the
  source's calls did: the rows per call wanted over the bucket's rows per unit;
- a new value of a unique column (`NewKey`): beyond the data's largest, from a
  sequence the copy holds (integers), or a new UUID: inserts never collide,
  whatever the clients, runs and rounds;
- a number combined with a column (`k = k + $2`, `Assumed`): drawn from a stated
  range, no data holds it;
- LIMIT and OFFSET (`Fixed`): the source's rows per call where it fills the limit;
- an array of a column's values (`ArrayOf`: `= ANY($1)`, an ORM's UNNEST insert):
  as many draws of the column's rule as the source's rows a call tell;
- from a log capture, the parameters that go together (arrays of one insert, or
  one no column holds) as one captured call's values (`FromCalls`): the arrays of
  one UNNEST keep one length.

Each draw renders as pgbench lines (`render`: `\\set` for numbers, a CASE in the
statement for other types) and samples in Python (`sample`) the same way, which
is how the tests check the rows a range reads without a server.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ...sqltree import qualified, quote_literal

DRAW = 10_000  # each parameter's draw: a uniform whole number from 1 to DRAW
INTEGER_TYPES = frozenset({"smallint", "integer", "bigint"})
ASSUMED = (1, 100)  # the values of a number combined with a column, none being kept


@dataclass(frozen=True)
class Pool:
    """Where a column's values come from: (value, weight) pairs and, for integers,
    (low, high, weight) ranges drawn uniformly; weights are shares of the table's
    rows (`rows`, the planner's estimate), so a range's rows per unit is known."""

    values: tuple[tuple[str, float], ...]
    ranges: tuple[tuple[int, int, float], ...]
    origin: str  # DATA_ORIGINS, or the calls a capture or a watch held
    rows: float = 0.0

    @property
    def empty(self) -> bool:
        return not (self.values or self.ranges)


@dataclass(frozen=True)
class FromPool:
    pool: Pool
    type: str


@dataclass(frozen=True)
class RangeDraw:
    """The low end drawn from `pool`; the high end `width` values above, per arm."""

    pool: Pool
    type: str
    rows: float  # wanted per call
    high: int  # the parameter of the high end
    width: int = 0  # a width captured from the source's calls, for every arm (0: sized)
    assumed: bool = False  # `rows` is a guess: nothing the source keeps tells it


@dataclass(frozen=True)
class NewKey:
    sequence: str | None  # None: a UUID


@dataclass(frozen=True)
class Assumed:
    low: int
    high: int


@dataclass(frozen=True)
class Fixed:
    value: int


@dataclass(frozen=True)
class Reuse:
    """A value an earlier statement of the same transaction drew (its `variable`)."""

    variable: str


@dataclass(frozen=True)
class ArrayOf:
    """An array of `length` values, each drawn by `element`."""

    element: FromPool | NewKey
    length: int


@dataclass(frozen=True)
class FromCalls:
    """The value $n had in each of a capture's calls (None: NULL), the call drawn
    uniformly by `$selector`'s draw, so that the parameters of one call go together."""

    values: tuple[str | None, ...]
    selector: int


Draw = FromPool | RangeDraw | NewKey | Assumed | Fixed | Reuse | ArrayOf | FromCalls

DATA_ORIGINS = ("pg_stats", "sampled rows")  # a pool of the values that exist


def from_the_data(draw: Draw) -> bool:
    """Whether `draw` takes a column's values from the data's statistics (the values
    that exist), not from the clients' own calls (which they ask for)."""
    if isinstance(draw, ArrayOf):
        draw = draw.element
    return isinstance(draw, FromPool | RangeDraw) and draw.pool.origin in DATA_ORIGINS


def pool_from_stats(
    type_name: str,
    mcv: list[str] | None,
    mcf: list[float] | None,
    bounds: list[str] | None,
    null_frac: float,
    rows: float = 0.0,
) -> Pool:
    """A column's values from its pg_stats row: most common values at their
    frequencies; the rest of the rows spread evenly over the histogram, whose
    buckets hold equal shares (integers drawn within a bucket, others at its bounds)."""
    common = list(zip(mcv or [], mcf or [], strict=False))
    rest = max(0.0, 1.0 - null_frac - sum(f for _, f in common))
    bounds = bounds or []
    if type_name in INTEGER_TYPES and len(bounds) >= 2:
        edges = [int(b) for b in bounds]
        share = rest / (len(edges) - 1)
        ranges = compact([(lo, hi, share) for lo, hi in itertools.pairwise(edges)])
        return Pool(tuple(common), ranges, DATA_ORIGINS[0], rows)
    spread = tuple((b, rest / len(bounds)) for b in bounds) if bounds and rest > 0 else ()
    return Pool(tuple(common) + spread, (), DATA_ORIGINS[0], rows)


ALIKE = 1.25  # adjacent buckets whose rows per unit differ less are drawn as one range


def compact(ranges: list[tuple[int, int, float]]) -> tuple[tuple[int, int, float], ...]:
    """Adjacent histogram buckets of about the same rows per unit merged into one range
    (a uniform column becomes a single `random(low, high)`): the same distribution
    within ALIKE, in fewer arms for pgbench to evaluate on every call."""
    out: list[tuple[int, int, float]] = []
    for lo, hi, weight in ranges:
        if out:
            plo, phi, pweight = out[-1]
            merged = (pweight + weight) / max(hi - plo, 1)
            own = weight / max(hi - lo, 1)
            if max(merged, own) <= ALIKE * min(merged, own) and phi == lo:
                previous = pweight / max(phi - plo, 1)
                if max(merged, previous) <= ALIKE * min(merged, previous):
                    out[-1] = (plo, hi, pweight + weight)
                    continue
        out.append((lo, hi, weight))
    return tuple(out)


CAPTURED_ARMS = 100  # a captured parameter's draw: at most this many values or ranges
HOT_CALLS = 5  # a captured value is hot from this many calls (and 1/CAPTURED_ARMS of them)


def pool_from_values(values: list[str], type_name: str, origin: str = "the log capture") -> Pool:
    """The values `origin` (a log capture, a watch) holds for one parameter, at their
    frequencies: integers as their hot values (each in at least HOT_CALLS calls and
    1/CAPTURED_ARMS of them) and ranges of equal shares between the quantiles of the
    rest; other types as their most frequent values."""
    counts = Counter(values)
    n = len(values)
    origin = f"{origin} ({n:,} calls, {len(counts):,} values)"
    if type_name in INTEGER_TYPES and all(_integer(v) for v in counts):
        hot = {v: c / n for v, c in counts.items() if c >= HOT_CALLS and c * CAPTURED_ARMS >= n}
        rest = sorted(int(v) for v in values if v not in hot)
        ranges: list[tuple[int, int, float]] = []
        if rest:
            buckets = min(CAPTURED_ARMS, len(rest))
            edges = [rest[round(i * (len(rest) - 1) / buckets)] for i in range(buckets + 1)]
            share = len(rest) / n / buckets
            ranges = [(lo, max(lo, hi), share) for lo, hi in itertools.pairwise(edges)]
        return Pool(tuple(hot.items()), compact(ranges), origin)
    return Pool(tuple((v, c / n) for v, c in counts.most_common(CAPTURED_ARMS)), (), origin)


def _integer(text: str) -> bool:
    return text.lstrip("-").isdigit()


def pool_from_rows(values: list[str]) -> Pool:
    return Pool(tuple((v, 1.0) for v in values), (), DATA_ORIGINS[1], float(len(values)))


def widths(span: RangeDraw) -> list[int]:
    """Per arm of the low end's draw (its values, then its ranges), the width that
    reads `span.rows` rows: the wanted rows over the rows per unit of the range the
    low end falls in; from a common value, whose rows per unit beyond it are not
    known, one."""
    if span.width > 0:
        return [span.width for _ in _arms(span.pool)]
    out = [1 for _ in span.pool.values]
    for lo, hi, weight in span.pool.ranges:
        per_unit = weight * span.pool.rows / max(hi - lo, 1)
        out.append(max(1, round(span.rows / per_unit)) if per_unit > 0 else 1)
    return out


def rows_per_value(pool: Pool) -> float:
    """The rows one value drawn from `pool` matches, on average: a common value its
    share of the rows, a value in a range the range's rows per unit."""
    total = sum(w for _, w in _arms(pool)) or 1.0
    rows = sum((w / total) * w * pool.rows for _, w in pool.values)
    rows += sum((w / total) * w * pool.rows / max(hi - lo, 1) for lo, hi, w in pool.ranges)
    return rows


def _arms(pool: Pool) -> list[tuple[Any, float]]:
    """The draw's arms in order: each common value, then each range."""
    return [(v, w) for v, w in pool.values] + [((lo, hi), w) for lo, hi, w in pool.ranges]


def cumulative_cuts(weights: list[float]) -> list[int]:
    """Cumulative cut points on 1..DRAW; an arm whose weight rounds away gets none."""
    total = sum(weights) or 1.0
    cuts, running = [], 0.0
    for w in weights:
        running += w
        cuts.append(round(running / total * DRAW))
    cuts[-1] = DRAW
    return cuts


def _case(r: str, items: list[Any], cuts: list[int]) -> str:
    """The item of the first arm whose cut holds `:r` (cuts rising to DRAW), as a
    pgbench `case` that halves the arms at each step: fifty arms take six
    comparisons, not twenty-five. Arms side by side with the same item are one,
    and an arm whose weight rounds away is none; one arm left: its item.

    pgbench evaluates the draw on every call, on the client's CPU: read in order,
    the ten ranges of sysbench's select_random_ranges (fifty arms each, and their
    widths) cost pgbench 69 µs a transaction where the call's own round trip costs
    5, and on cores it shares with the server that CPU is taken from the server."""
    arms: list[tuple[str, int]] = []
    last = 0
    for item, cut in zip(items, cuts, strict=True):
        if cut <= last:
            continue
        if arms and arms[-1][0] == str(item):
            arms[-1] = (str(item), cut)
        else:
            arms.append((str(item), cut))
        last = cut
    return _halves(r, arms)


def _halves(r: str, arms: list[tuple[str, int]]) -> str:
    if len(arms) == 1:
        return arms[0][0]
    middle = len(arms) // 2
    low, high = _halves(r, arms[:middle]), _halves(r, arms[middle:])
    return f"case when {r} <= {arms[middle - 1][1]} then {low} else {high} end"


def _integer_item(arm: Any) -> str:
    if isinstance(arm, tuple):
        return f"random({arm[0]}, {arm[1]})"
    return str(int(arm)) if str(arm).lstrip("-").isdigit() else str(arm)


def render(n: int | str, draw: Draw) -> tuple[list[str], str]:
    """The pgbench lines that draw $n, and what stands for $n in the statement (for a
    span, the high end's too: `render` of the span gives both names). Numbers only:
    pgbench holds no text, which variants.py writes into the statement."""
    if isinstance(draw, Fixed):
        return [], str(draw.value)
    if isinstance(draw, Reuse):
        return [], f":{draw.variable}"
    if isinstance(draw, Assumed):
        return [f"\\set pgopt_p{n} random({draw.low}, {draw.high})"], f":pgopt_p{n}"
    if isinstance(draw, ArrayOf):
        lines, items = [], []
        for i in range(1, draw.length + 1):
            drawn, value = render(f"{n}_{i}", draw.element)
            lines += drawn
            items.append(value)
        return lines, f"ARRAY[{', '.join(items)}]"
    if isinstance(draw, NewKey):
        if draw.sequence is None:
            return [], "gen_random_uuid()"
        schema, _, name = draw.sequence.partition(".")
        return [], "nextval(" + quote_literal(qualified(schema, name)) + ")"
    if isinstance(draw, FromCalls) or draw.type not in INTEGER_TYPES:
        raise ValueError("text is written into the statement, one variant each (variants.py)")
    pool = draw.pool
    arms = _arms(pool)
    cuts = cumulative_cuts([w for _, w in arms])
    r = f":pgopt_r{n}"
    lines = [f"\\set pgopt_r{n} random(1, {DRAW})"]
    lines.append(f"\\set pgopt_p{n} {_case(r, [_integer_item(a) for a, _ in arms], cuts)}")
    if isinstance(draw, RangeDraw):
        lines.append(f"\\set pgopt_w{n} {_case(r, widths(draw), cuts)}")
        lines.append(f"\\set pgopt_p{draw.high} :pgopt_p{n} + :pgopt_w{n} - 1")
    return lines, f":pgopt_p{n}"


def sample(draw: Draw, rng: random.Random) -> tuple[Any, Any]:
    """One value of the draw, as the rendered pgbench lines would give it: (value,
    the span's high end or None)."""
    if isinstance(draw, Fixed):
        return draw.value, None
    if isinstance(draw, Assumed):
        return rng.randint(draw.low, draw.high), None
    if isinstance(draw, NewKey | Reuse):
        raise ValueError("a new key comes from the server, a reused one from another draw")
    if isinstance(draw, ArrayOf):
        return [sample(draw.element, rng)[0] for _ in range(draw.length)], None
    if isinstance(draw, FromCalls):
        raise ValueError("a captured call's values are drawn with the call, by its selector")
    arms = _arms(draw.pool)
    cuts = cumulative_cuts([w for _, w in arms])
    r = rng.randint(1, DRAW)
    index = next(i for i, cut in enumerate(cuts) if r <= cut or i == len(cuts) - 1)
    arm = arms[index][0]
    value = rng.randint(arm[0], arm[1]) if isinstance(arm, tuple) else arm
    if isinstance(draw, RangeDraw):
        return value, int(value) + widths(draw)[index] - 1
    return value, None
