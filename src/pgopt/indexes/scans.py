"""What an index could serve in a plan (pure, on EXPLAIN's JSON with VERBOSE): the
tables read sequentially or by an index with a filter left over, the conditions
on each (equality, range, LIKE, constants), the join keys a hash or merge join
matches, and the sort a LIMIT stops early (through a FOR UPDATE's LockRows), with
its directions.

A condition is read with PostgreSQL's parser (pglast) from the text EXPLAIN
prints, so `lower(c.email) = $1` is an expression on `email`, `status =
'pending'::text` a column compared with a value written in the statement (a
constant, or an example: candidates.py tells which), `deleted_at IS NULL` a
constant predicate, and `o.customer_id = c.id` a join key. A binary-coercible cast
of a column is the column: a Django CharField is `varchar`, compared as text, and
EXPLAIN prints `(status)::text = $1`; an index on `status` serves it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pglast import ast, parse_sql
from pglast.enums import A_Expr_Kind, BoolExprType, SortByDir
from pglast.parser import ParseError
from pglast.stream import RawStream

from ..plans.shape import Plan, nodes
from ..sqltree import qualified, quote_ident, unquoted, walk

EQUALITY = {"="}
RANGE = {"<", "<=", ">", ">="}
LIKE = {"~~", "~~*"}
SCANS = {"Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan"}
# the nodes between a Limit and the Sort it stops early
UNDER_LIMIT = {"Gather Merge", "Result", "Subquery Scan", "LockRows"}
# pg_cast's binary-coercible casts (castmethod 'b', a relabeling: the value's bytes
# unchanged) between types a btree is made on, as (column type, cast to) by pg_type's
# names; the others (regclass to oid and the like) are no application's keys
BINARY_COERCIBLE = frozenset(
    {
        ("varchar", "text"),
        ("text", "varchar"),
        ("varchar", "bpchar"),
        ("text", "bpchar"),
        ("cidr", "inet"),
        ("bit", "varbit"),
        ("varbit", "bit"),
    }
)
# a table's column types (pg_type's names), by schema.table and column
ColumnTypes = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class Key:
    """A column or an expression of one table, as an index names it."""

    expr: str  # as SQL: `customer_id`, `"Id"`, `lower(email)`
    columns: tuple[str, ...]  # the table's columns it reads, their names unquoted
    desc: bool = False

    @property
    def is_column(self) -> bool:
        return len(self.columns) == 1 and self.expr == quote_ident(self.columns[0])


@dataclass
class Scan:
    """What one table's read in one plan asks of an index."""

    schema: str
    table: str
    how: str  # "seq scan", "index scan with a filter", "join key", "sort under a limit"
    rows: float  # the planner's rows of the table read
    equality: list[Key] = field(default_factory=list)
    ranges: list[Key] = field(default_factory=list)
    sort: list[Key] = field(default_factory=list)
    like: list[Key] = field(default_factory=list)
    # a key compared with a value written in the statement, and that predicate
    literals: list[tuple[Key, str]] = field(default_factory=list)
    constants: list[str] = field(default_factory=list)  # IS NULL, a boolean column
    constant_columns: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)  # columns the plan reads from it

    @property
    def qualified(self) -> str:
        return qualified(self.schema, self.table)

    @property
    def useful(self) -> bool:
        return bool(
            self.equality
            or self.ranges
            or self.sort
            or self.like
            or self.literals
            or self.constants
        )


def scans_of(plan: Plan, types: ColumnTypes | None = None) -> list[Scan]:
    """Every scan of `plan` an index could improve; `types`: the column types of its
    tables, to see a binary-coercible cast of a column as the column."""
    types = types or {}
    aliases = {
        str(n.get("Alias", n["Relation Name"])): (
            str(n.get("Schema", "public")),
            n["Relation Name"],
        )
        for _d, n in nodes(plan)
        if "Relation Name" in n
    }
    found: list[Scan] = []
    limited = _under_limit(plan)
    for _depth, node in nodes(plan):
        kind = node.get("Node Type")
        if kind in SCANS and "Relation Name" in node:
            scan = _scan(node, aliases, types)
            if scan is not None and scan.useful:
                found.append(scan)
        for key in ("Hash Cond", "Merge Cond", "Join Filter"):
            if key in node:
                found.extend(_join_keys(str(node[key]), node, aliases, types))
        if kind in ("Sort", "Incremental Sort") and id(node) in limited:
            sort = _sort(node, aliases, types)
            if sort is not None:
                found.append(sort)
    return found


def _under_limit(plan: Plan) -> set[int]:
    """The Sort nodes a Limit reads (directly, or through a Gather Merge, a
    projection or the row locks of FOR UPDATE): an index in their order lets the
    limit stop after a few rows."""
    out: set[int] = set()
    for _d, node in nodes(plan):
        if node.get("Node Type") != "Limit":
            continue
        below = node.get("Plans", [])
        while below:
            child = below[0]
            if child.get("Node Type") in ("Sort", "Incremental Sort"):
                out.add(id(child))
                break
            if child.get("Node Type") not in UNDER_LIMIT:
                break
            below = child.get("Plans", [])
    return out


def _scan(node: Plan, aliases: dict[str, tuple[str, str]], types: ColumnTypes) -> Scan | None:
    schema, table = str(node.get("Schema", "public")), str(node["Relation Name"])
    alias = str(node.get("Alias", table))
    if node["Node Type"] == "Seq Scan":
        how, conditions = "seq scan", [node.get("Filter")]
    elif node.get("Filter"):
        how = "index scan with a filter"
        conditions = [node.get("Index Cond") or node.get("Recheck Cond"), node.get("Filter")]
    else:
        return None
    scan = Scan(schema, table, how, float(node.get("Plan Rows", 0)))
    for text in conditions:
        if text:
            _read_conditions(str(text), alias, aliases, scan, types.get(scan.qualified, {}))
    scan.output = _columns_of(node.get("Output", []), alias)
    return scan


def _join_keys(
    text: str, node: Plan, aliases: dict[str, tuple[str, str]], types: ColumnTypes
) -> list[Scan]:
    """An index on each side's join key: a nested loop can then look rows up."""
    out = []
    for conjunct in _conjuncts(text):
        if not (isinstance(conjunct, ast.A_Expr) and _op(conjunct) in EQUALITY):
            continue
        for side in (conjunct.lexpr, conjunct.rexpr):
            if isinstance(side, ast.TypeCast) and isinstance(side.arg, ast.ColumnRef):
                read = aliases.get(_qualifier(side.arg))
                side = _uncast(side, types.get(qualified(*read), {}) if read else {})
            fields: Any = getattr(side, "fields", None)
            if isinstance(side, ast.ColumnRef) and len(fields) == 2:
                alias, column = fields[0].sval, fields[1].sval
                if alias in aliases:
                    schema, table = aliases[alias]
                    scan = Scan(schema, table, "join key", float(node.get("Plan Rows", 0)))
                    scan.equality.append(Key(quote_ident(column), (column,)))
                    out.append(scan)
    return out


def _sort(node: Plan, aliases: dict[str, tuple[str, str]], types: ColumnTypes) -> Scan | None:
    """The sort under a LIMIT, when all its keys are one table's: with the filters of
    that table's scan below it (equality first, then the sort keys)."""
    keys: list[tuple[str, Key]] = []
    for text in node.get("Sort Key", []):
        try:
            stmt: Any = parse_sql(f"select 1 order by {text}")[0].stmt
            (by,) = stmt.sortClause
        except (ParseError, ValueError):
            return None
        alias = _only_alias(by.node)
        if alias is None or alias not in aliases:
            return None
        column = _uncast(by.node, types.get(qualified(*aliases[alias]), {}))
        keys.append((alias, _key(column, desc=by.sortby_dir == SortByDir.SORTBY_DESC)))
    if not keys or len({a for a, _k in keys}) != 1:
        return None
    alias = keys[0][0]
    schema, table = aliases[alias]
    scan = Scan(schema, table, "sort under a limit", float(node.get("Plan Rows", 0)))
    scan.sort = [k for _a, k in keys]
    for _d, below in nodes(node):
        if below.get("Relation Name") == table and str(below.get("Alias", table)) == alias:
            for key in ("Index Cond", "Filter"):
                if below.get(key):
                    _read_conditions(
                        str(below[key]), alias, aliases, scan, types.get(scan.qualified, {})
                    )
            scan.output = _columns_of(below.get("Output", []), alias)
    scan.ranges = []  # an index in sort order serves the limit; a range would come first
    return scan


def _read_conditions(
    text: str, alias: str, aliases: dict[str, Any], scan: Scan, types: Mapping[str, str]
) -> None:
    """`scan`'s keys from the conditions in `text` on `alias` (its columns' `types`)."""
    for conjunct in _conjuncts(text):
        if isinstance(conjunct, ast.A_Expr) and conjunct.kind in (
            A_Expr_Kind.AEXPR_OP,
            A_Expr_Kind.AEXPR_OP_ANY,
            A_Expr_Kind.AEXPR_IN,
        ):
            op = _op(conjunct)
            column_side, other = _sides(conjunct, alias)
            if column_side is None:
                continue
            key = _key(_uncast(column_side, types))
            if _has_column(other):
                if op in EQUALITY and _only_alias(other) not in (None, alias):
                    scan.equality.append(key)  # a join's key, known per outer row
                continue
            constant = not any(isinstance(n, ast.ParamRef) for n in walk(other))
            if op in EQUALITY and constant and conjunct.kind == A_Expr_Kind.AEXPR_OP:
                scan.literals.append((key, _deparse(conjunct)))
            elif op in EQUALITY:
                scan.equality.append(key)
            elif op in RANGE:
                scan.ranges.append(key)
            elif op in LIKE:
                scan.like.append(key)
        elif isinstance(conjunct, ast.NullTest) and _only_alias(conjunct.arg) == alias:
            scan.constants.append(_deparse(conjunct))
            scan.constant_columns.extend(_key(conjunct.arg).columns)
        elif isinstance(conjunct, ast.ColumnRef | ast.BoolExpr) and _is_flag(conjunct, alias):
            scan.constants.append(_deparse(conjunct))
            scan.constant_columns.extend(_key(conjunct).columns)


def _conjuncts(text: str) -> list[Any]:
    try:
        stmt: Any = parse_sql(f"select 1 where {text}")[0].stmt
        where = stmt.whereClause
    except ParseError:
        return []
    if isinstance(where, ast.BoolExpr) and where.boolop == BoolExprType.AND_EXPR:
        return list(where.args or ())
    return [where]


def _op(expr: ast.A_Expr) -> str:
    return str(expr.name[-1].sval) if expr.name else ""


def _sides(expr: ast.A_Expr, alias: str) -> tuple[Any, Any]:
    """(the side reading only `alias`'s columns, the other side), or (None, None)."""
    for mine, other in ((expr.lexpr, expr.rexpr), (expr.rexpr, expr.lexpr)):
        if _has_column(mine) and _only_alias(mine) in (alias, ""):
            if mine is expr.rexpr and _op(expr) not in EQUALITY:
                return None, None  # `$1 < col`: EXPLAIN puts the column on the left
            return mine, other
    return None, None


def _has_column(node: Any) -> bool:
    return any(isinstance(n, ast.ColumnRef) for n in walk(node))


def _only_alias(node: Any) -> str | None:
    """The one qualifier of the columns under `node` ("" when unqualified), or None
    when they belong to several."""
    found = {_qualifier(n) for n in walk(node) if isinstance(n, ast.ColumnRef)}
    return found.pop() if len(found) == 1 else None


def _is_flag(node: Any, alias: str) -> bool:
    """A boolean column alone (`active`, `NOT active`)."""
    if isinstance(node, ast.BoolExpr):
        if node.boolop != BoolExprType.NOT_EXPR:
            return False
        node = (node.args or (None,))[0]
    return isinstance(node, ast.ColumnRef) and _only_alias(node) in (alias, "")


def _uncast(node: Any, types: Mapping[str, str]) -> Any:
    """A binary-coercible cast of a column (`(status)::text` of a varchar): the
    column; anything else as it is."""
    if not (isinstance(node, ast.TypeCast) and isinstance(node.arg, ast.ColumnRef)):
        return node
    to: Any = node.typeName
    source = types.get(_name(node.arg))
    if to.arrayBounds or to.typmods or source is None:
        return node
    return node.arg if (source, str(to.names[-1].sval)) in BINARY_COERCIBLE else node


def _key(node: Any, desc: bool = False) -> Key:
    """`node` as an index key: its columns unqualified; an expression in parentheses
    as CREATE INDEX wants it."""
    columns: list[str] = []
    for n in walk(node):
        if isinstance(n, ast.ColumnRef):
            name = _name(n)
            n.fields = (ast.String(sval=name),)
            if name not in columns:
                columns.append(name)
    if isinstance(node, ast.ColumnRef):
        return Key(quote_ident(columns[0]), tuple(columns), desc)
    return Key(_deparse(node), tuple(columns), desc)


def _deparse(node: Any) -> str:
    for n in walk(node):
        if isinstance(n, ast.ColumnRef) and _qualifier(n):
            n.fields = (ast.String(sval=_name(n)),)
    return str(RawStream()(node))


# what an UPDATE's or DELETE's scan outputs beside the columns; no index can hold them
SYSTEM_COLUMNS = frozenset({"ctid", "tableoid", "xmin", "xmax", "cmin", "cmax"})


def _columns_of(output: list[str], alias: str) -> list[str]:
    """The plain columns among a node's Output entries (`orders.total`, `"Foo"."Id"`),
    unquoted; system columns left out."""
    out = []
    prefix = f"{quote_ident(alias)}."
    for entry in output:
        name = unquoted(entry[len(prefix) :] if entry.startswith(prefix) else entry)
        if name is not None and name not in out and name not in SYSTEM_COLUMNS:
            out.append(name)
    return out


def _qualifier(ref: Any) -> str:
    """A column reference's table or alias ("" when unqualified)."""
    fields = tuple(ref.fields or ())
    return str(fields[0].sval) if len(fields) > 1 else ""


def _name(ref: Any) -> str:
    return str(tuple(ref.fields or ())[-1].sval)
