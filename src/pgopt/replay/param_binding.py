"""What each parameter ($1, $2, ...) of a normalized statement stands for, read from
its parse tree (pglast), scope by scope: the column on the other side of `=`, `<`,
`IN (...)`, `LIKE` (or a function of one, `lower(email) = $1`; or the same
function on both sides, `UPPER(email::text) = UPPER($1)`, where a value of the
column is what to send), an array of the column's values (`id = ANY($1)`, an
INSERT's `SELECT * FROM UNNEST($1::int[], ...)`), the column an
INSERT or UPDATE writes it into, LIMIT or OFFSET; two that bound one column from
both sides form a `ColumnRange`; one combined with a column in arithmetic is an
`Operand`, which no data holds. replay/replayable.py tells, from these, whether the
statement can be replayed. Pure: no server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pglast import ast, parse_sql
from pglast.enums.parsenodes import A_Expr_Kind
from pglast.enums.primnodes import BoolExprType
from pglast.stream import RawStream

from ..source.catalog import Table
from ..sqltree import walk

REPLAYABLE = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)
COMPARISONS = frozenset({"=", "<>", "!=", "<", "<=", ">", ">=", "~~", "~~*", "!~~", "!~~*"})
COMPARING_KINDS = frozenset(
    {
        A_Expr_Kind.AEXPR_IN,
        A_Expr_Kind.AEXPR_LIKE,
        A_Expr_Kind.AEXPR_ILIKE,
        A_Expr_Kind.AEXPR_BETWEEN,
        A_Expr_Kind.AEXPR_NOT_BETWEEN,
        A_Expr_Kind.AEXPR_DISTINCT,
        A_Expr_Kind.AEXPR_NOT_DISTINCT,
    }
)
ARITHMETIC = frozenset({"+", "-", "*", "/", "%"})
LOWER = frozenset({">", ">="})  # column > $n: $n is a lower bound
UPPER = frozenset({"<", "<="})


@dataclass(frozen=True)
class ColumnUse:
    """$n compared with, or written into, `column` of `table`."""

    table: Table
    column: str
    written: bool = False  # INSERT ... VALUES / UPDATE ... SET: a new value of the column
    # compared with a function of the column (`lower(email) = $1`): the function, with
    # `{}` where the column was, so the replay sends it of a value of the column
    applied: str | None = None
    array: bool = False  # $n is an array of the column's values (`= ANY($1)`, UNNEST)


@dataclass(frozen=True)
class Operand:
    """$n combined with `column` in arithmetic (`k + $2`): no data to draw it from."""

    table: Table
    column: str
    operator: str


@dataclass(frozen=True)
class ColumnRange:
    """$low and $high bound `column` from both sides: a range of it."""

    table: Table
    column: str
    low: int
    high: int


Use = ColumnUse | Operand | str  # str: 'limit', 'offset'


def table_of(range_var: Any) -> Table:
    return Table(range_var.schemaname, str(range_var.relname))


def _param(node: Any) -> int | None:
    """$n, also under a cast ($1::int)."""
    while isinstance(node, ast.TypeCast):
        node = node.arg
    return int(node.number or 0) if isinstance(node, ast.ParamRef) else None


def _param_under_function(node: Any) -> int | None:
    """$n as the only thing a function call reads (`UPPER($1)`, `lower($1::text)`)."""
    if not isinstance(node, ast.FuncCall) or node.agg_star or node.over is not None:
        return None
    inside = list(walk(node.args or ()))
    params = [n for n in inside if isinstance(n, ast.ParamRef)]
    if len(params) != 1 or any(isinstance(n, ast.ColumnRef) for n in inside):
        return None
    return int(params[0].number or 0)


def _column(node: Any) -> tuple[str, ...] | None:
    while isinstance(node, ast.TypeCast):
        node = node.arg
    fields: Any = node.fields if isinstance(node, ast.ColumnRef) else None
    if fields and all(isinstance(f, ast.String) for f in fields):
        return tuple(str(f.sval) for f in fields)
    return None


def _operator(expr: Any) -> str | None:
    return expr.name[-1].sval if expr.name and isinstance(expr.name[-1], ast.String) else None


def _compares(expr: Any) -> bool:
    """A comparison of a column with one value (or a list of them): `= ANY($1)` takes
    an array, which a column's values are not."""
    if expr.kind in COMPARING_KINDS:
        return True
    op = expr.name[-1].sval if expr.name and isinstance(expr.name[-1], ast.String) else None
    return expr.kind == A_Expr_Kind.AEXPR_OP and op in COMPARISONS


def _function_name(call: Any) -> str | None:
    last = (call.funcname or (None,))[-1]
    return str(last.sval) if isinstance(last, ast.String) else None


def _any_of(expr: Any) -> bool:
    """`column = ANY($1)`: the column compared with each value of an array."""
    return expr.kind == A_Expr_Kind.AEXPR_OP_ANY and _operator(expr) in COMPARISONS


def _unnested(source: Any) -> list[Any]:
    """The arguments of an INSERT's `SELECT * FROM UNNEST(a, b, ...)` (how an ORM
    inserts many rows in one statement: one array a column), else none."""
    if not isinstance(source, ast.SelectStmt) or source.valuesLists:
        return []
    targets = source.targetList or ()
    star = len(targets) == 1 and isinstance(targets[0].val, ast.ColumnRef)
    star = star and isinstance((targets[0].val.fields or (None,))[-1], ast.A_Star)
    ranges = source.fromClause or ()
    if not star or len(ranges) != 1 or not isinstance(ranges[0], ast.RangeFunction):
        return []
    functions = ranges[0].functions or ()
    call: Any = functions[0][0] if len(functions) == 1 else None
    if not isinstance(call, ast.FuncCall) or _function_name(call) != "unnest":
        return []
    return list(call.args or ())


Scope = tuple[dict[str, Table], ...]  # innermost first: alias or name -> table


class Binder:
    """Walks a statement scope by scope and binds each $n to what it stands for."""

    def __init__(self, columns_of: Any) -> None:
        self.columns_of = columns_of
        self.params: dict[int, Use] = {}
        self.spans: list[ColumnRange] = []

    def visit(self, node: Any, outer: Scope) -> None:
        if isinstance(node, tuple | list):
            for item in node:
                self.visit(item, outer)
            return
        if not isinstance(node, ast.Node):
            return
        scope = outer
        if isinstance(node, REPLAYABLE):
            scope = (self._range(node), *outer)
            self._statement(node, scope)
        elif isinstance(node, ast.A_Expr) and _any_of(node):
            use = self._resolve(_column(node.lexpr), scope)
            n = _param(node.rexpr)
            if use is not None and n is not None:
                self.params.setdefault(n, ColumnUse(use.table, use.column, array=True))
        elif isinstance(node, ast.A_Expr) and _compares(node):
            self._comparison(node, scope)
            if node.kind == A_Expr_Kind.AEXPR_BETWEEN:
                self._between(node, scope)
        elif isinstance(node, ast.A_Expr) and _operator(node) in ARITHMETIC:
            self._arithmetic(node, scope)
        elif isinstance(node, ast.BoolExpr) and node.boolop == BoolExprType.AND_EXPR:
            self._bounds(node.args or (), scope)
        for name in node:
            self.visit(getattr(node, name), scope)

    def _range(self, stmt: Any) -> dict[str, Table]:
        """The tables this statement's own FROM (and USING, and target) names; a
        subquery's tables belong to the subquery's scope."""
        found: dict[str, Table] = {}
        pending = [
            *(getattr(stmt, "fromClause", None) or ()),
            *(getattr(stmt, "usingClause", None) or ()),
            getattr(stmt, "relation", None),
        ]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.JoinExpr):
                pending += [node.larg, node.rarg]
            elif isinstance(node, ast.RangeVar):
                table = table_of(node)
                alias: Any = node.alias
                found[str(alias.aliasname) if alias else table.name] = table
        return found

    def _statement(self, stmt: Any, scope: Scope) -> None:
        if isinstance(stmt, ast.SelectStmt):
            for node, what in ((stmt.limitCount, "limit"), (stmt.limitOffset, "offset")):
                n = _param(node)
                if n is not None:
                    self.params[n] = what
        elif isinstance(stmt, ast.InsertStmt):
            table = table_of(stmt.relation)
            names = [c.name for c in stmt.cols or ()] or list(self.columns_of(table))
            source: Any = stmt.selectStmt
            rows = source.valuesLists if source is not None else None
            for row in rows or ():
                for position, value in enumerate(row):
                    n = _param(value)
                    if n is not None and position < len(names):
                        self.params[n] = ColumnUse(table, names[position], written=True)
            for position, value in enumerate(_unnested(source)):
                n = _param(value)
                if n is not None and position < len(names):
                    self.params[n] = ColumnUse(table, names[position], written=True, array=True)
        elif isinstance(stmt, ast.UpdateStmt):
            table = table_of(stmt.relation)
            for target in stmt.targetList or ():
                n = _param(target.val)
                if n is not None and target.name:
                    self.params[n] = ColumnUse(table, target.name, written=True)

    def _comparison(self, expr: Any, scope: Scope) -> None:
        right = expr.rexpr if isinstance(expr.rexpr, tuple | list) else (expr.rexpr,)
        for column, others in ((expr.lexpr, right), (expr.rexpr, (expr.lexpr,))):
            use = self._resolve(_column(column), scope)
            if use is None:
                use = self._applied(column, scope)
            if use is None:
                continue
            for other in others:
                n = _param(other)
                if n is not None:
                    self.params.setdefault(n, use)
                    continue
                n = _param_under_function(other)
                if n is not None:  # UPPER(email) = UPPER($1): send a value of email
                    self.params.setdefault(n, ColumnUse(use.table, use.column))

    def _applied(self, node: Any, scope: Scope) -> ColumnUse | None:
        """`lower(email)`: a function of one column and constants, as a ColumnUse of
        the column with the function kept (`lower({})`)."""
        if not isinstance(node, ast.FuncCall) or node.agg_star or node.over is not None:
            return None
        refs = [n for n in walk(node) if isinstance(n, ast.ColumnRef)]
        if len(refs) != 1 or any(isinstance(n, ast.ParamRef) for n in walk(node)):
            return None
        use = self._resolve(_column(refs[0]), scope)
        if use is None:
            return None
        # on a copy of the expression: the statement's own tree stays as it is
        stmt: Any = parse_sql(f"select {RawStream()(node)}")[0].stmt
        copy = stmt.targetList[0].val
        marker = "pgopt_applied_value"
        for ref in walk(copy):
            if isinstance(ref, ast.ColumnRef):
                ref.fields = (ast.String(sval=marker),)
        text = str(RawStream()(copy)).replace("{", "{{").replace("}", "}}")
        return ColumnUse(use.table, use.column, applied=text.replace(marker, "{}"))

    def _between(self, expr: Any, scope: Scope) -> None:
        use = self._resolve(_column(expr.lexpr), scope)
        bounds = [_param(v) for v in expr.rexpr or ()]
        if use is not None and len(bounds) == 2 and None not in bounds:
            low, high = bounds
            assert low is not None and high is not None
            self.spans.append(ColumnRange(use.table, use.column, low, high))

    def _arithmetic(self, expr: Any, scope: Scope) -> None:
        for column, other in ((expr.lexpr, expr.rexpr), (expr.rexpr, expr.lexpr)):
            use = self._resolve(_column(column), scope)
            n = _param(other)
            if use is not None and n is not None:
                self.params.setdefault(n, Operand(use.table, use.column, _operator(expr) or ""))

    def _bounds(self, args: Any, scope: Scope) -> None:
        """`col >= $a AND col <= $b` (or with > and <): a span of col."""
        lows: dict[tuple[Table, str], int] = {}
        highs: dict[tuple[Table, str], int] = {}
        for expr in args:
            if not isinstance(expr, ast.A_Expr) or expr.kind != A_Expr_Kind.AEXPR_OP:
                continue
            op = _operator(expr)
            for column, other, flip in (
                (expr.lexpr, expr.rexpr, False),
                (expr.rexpr, expr.lexpr, True),
            ):
                use = self._resolve(_column(column), scope)
                n = _param(other)
                if use is None or n is None or op not in LOWER | UPPER:
                    continue
                lower = (op in LOWER) != flip
                (lows if lower else highs).setdefault((use.table, use.column), n)
        for key, low in lows.items():
            if key in highs:
                self.spans.append(ColumnRange(key[0], key[1], low, highs[key]))

    def _resolve(self, name: tuple[str, ...] | None, scope: Scope) -> ColumnUse | None:
        if not name:
            return None
        column = name[-1]
        for tables in scope:
            if len(name) >= 2:
                table = tables.get(name[-2])
                if table is not None:
                    return ColumnUse(table, column)
                continue
            having = [t for t in tables.values() if column in self.columns_of(t)]
            if len(having) == 1:
                return ColumnUse(having[0], column)
        return None
