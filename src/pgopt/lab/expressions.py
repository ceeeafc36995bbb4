"""Values computed at run time: settings from the machine (`shared_buffers =
"{ram_mb // 4}MB"`), dataset variables from the dataset size (`"{rows // 10000}"`),
and an advise rule's derived figures (`evaluate`).

A value may hold `{expression}` parts: arithmetic (+ - * // / %), `min(...)`,
`max(...)`, `ceil(...)`, `floor(...)`, comparisons and `and`/`or`/`not` (true is
1), `a if condition else b`, numbers, and the names the engine provides (`ram_mb`,
`cpus` and `scale` for settings; the size variable and `scale` for dataset
variables; the machine's and server's facts for a tuning profile).
Expressions are parsed with `ast` and evaluated on a whitelist: a lab file
cannot run code. Arithmetic that fails for the figures it is given (a division or
a modulo by zero, a figure past a float's range, inf or NaN on the way) is a
`FigureError`, which names the expression and the figures: a setting is never
`inf`, and a lab whose divisor is 0 on this machine is one line, not a traceback.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping

from ..errors import LabError

NAMES = ("ram_mb", "cpus", "scale")
# the figures a value is checked with at load, one set and then another: what fails
# for both (`{1 / 0}`) is the lab's error; what fails for one (`{ram_mb // (cpus -
# 2)}`) depends on the machine, and is found when the run starts
STAND_INS = (1024.0, 3.0)
_PART = re.compile(r"\{([^{}]*)\}")
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
}
_ARITY: dict[str, Callable[[int], bool]] = {
    "min": lambda n: n >= 2,
    "max": lambda n: n >= 2,
    "ceil": lambda n: n == 1,
    "floor": lambda n: n == 1,
}
_COMPARE: dict[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


class FigureError(LabError):
    """An expression's arithmetic fails for the figures it was given."""


class _NotFinite(ArithmeticError):
    """A value past a float's range (inf), or NaN."""


def _evaluate(node: ast.AST, names: Mapping[str, float]) -> float:
    value = _value(node, names)
    if not math.isfinite(value):
        raise _NotFinite
    return value


def _value(node: ast.AST, names: Mapping[str, float]) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise LabError(f"unknown name {node.id!r} (known: {', '.join(sorted(names))})")
        return float(names[node.id])
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left, held = _evaluate(node.left, names), True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(right_node, names)
            held = held and _COMPARE[type(op)](left, right)
            left = right
        return float(held)
    if isinstance(node, ast.IfExp):
        chosen = node.body if _evaluate(node.test, names) else node.orelse
        return _evaluate(chosen, names)
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v, names) for v in node.values]
        return float(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        value = _evaluate(node.operand, names)
        return float(not value) if isinstance(node.op, ast.Not) else -value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left, names), _evaluate(node.right, names))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and _ARITY[node.func.id](len(node.args))
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_evaluate(a, names) for a in node.args))
    raise LabError(f"unsupported expression {ast.unparse(node)!r}")


def evaluate(expression: str, names: Mapping[str, float]) -> float:
    """The value of one expression; a FigureError where its arithmetic fails for
    `names` (it divides by zero, or overflows), a LabError where it is no expression."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
        return _evaluate(tree, names)
    except SyntaxError as e:
        raise LabError(f"invalid expression {_shown(expression)}: {e.msg}") from None
    except (RecursionError, MemoryError):  # the parser's depth limits, or ours
        raise LabError(f"{_shown(expression)} is nested too deeply") from None
    except ZeroDivisionError:
        why = "divides by zero"
    except (OverflowError, _NotFinite):
        why = "overflows (past a float's 1.8e308)"
    used = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names})
    figures = ", ".join(f"{n} = {names[n]:g}" for n in used)
    raise FigureError(f"{_shown(expression)} {why}" + (f" where {figures}" if used else ""))


def _shown(expression: str, most: int = 80) -> str:
    text = expression.strip()
    return "{" + (text if len(text) <= most else text[: most - 3] + "...") + "}"


def expand(value: str, names: Mapping[str, float], *, decimals: int = 0) -> str:
    """Replace every `{expression}` in `value` by its value: an integer, or with up to
    `decimals` decimals (trailing zeros dropped) when it has a fraction."""

    def text(number: float) -> str:
        if not decimals or float(number).is_integer():
            return str(int(number))
        return f"{number:.{decimals}f}".rstrip("0").rstrip(".")

    return _PART.sub(lambda m: text(evaluate(m.group(1), names)), value)


def check(value: str, names: Iterable[str] = NAMES) -> None:
    """Validate a value at load time, with stand-in figures for `names`: arithmetic
    that fails with each set of them (`{1 / 0}`) is an error here, arithmetic that
    fails with one only waits for the machine's figures."""
    names = tuple(names)
    try:
        expand(value, dict.fromkeys(names, STAND_INS[0]))
    except FigureError as first:
        try:
            expand(value, dict.fromkeys(names, STAND_INS[1]))
        except FigureError:
            raise first from None


def resolve(settings: Mapping[str, str], names: Mapping[str, float]) -> dict[str, str]:
    """`settings` with their expressions' values; a FigureError names the setting."""
    out = {}
    for name, value in settings.items():
        try:
            out[name] = expand(value, names)
        except FigureError as e:
            raise FigureError(f"{name}: {e}") from None
    return out
