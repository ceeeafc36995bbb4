"""What the index advisor reads from the live server, read-only (advise's session:
default_transaction_read_only, timeouts, pgopt's application_name): the
statements (pg_stat_statements, or a `--queries` file), each one's generic plan,
and the tables its plans read: rows, pages, writes, columns, existing indexes; a
partition as the partitioned table it belongs to; and what a copy of them must
hold (ab/relations.py: the views and materialized views the statements name, what
they read; what cannot be copied, left out with why).

A statement is checked before it is sent: it must parse, and every table it names
must exist and be readable by this role; so a statement pgopt cannot use is said
per statement, with the reason, and leaves no error in the server's log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg
from pglast.parser import ParseError

from ..ab.relations import CopyList, copy_list, read_relations
from ..plans.generic import PlanError, generic_plan, parameter_count
from ..plans.shape import Plan, nodes
from ..queries import load
from ..servers.read_only import dict_rows
from ..source.catalog import SourceStatement
from ..sqltree import qualified, relations_named, unquoted
from .candidates import ColumnStats, ExistingIndex, TableFacts, key_classes
from .scans import Key
from .workload import Statement, chosen

SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")


@dataclass
class LiveReading:
    statements: list[Statement]
    plans: dict[str, Plan] = field(default_factory=dict)  # statement id -> generic plan
    refused: dict[str, str] = field(default_factory=dict)  # statement id -> why not
    tables: dict[str, TableFacts] = field(default_factory=dict)
    writes_to: dict[str, str] = field(default_factory=dict)  # statement id -> schema.table
    roots: dict[str, str] = field(default_factory=dict)  # partition -> its partitioned table
    copy: CopyList = field(default_factory=lambda: CopyList(()))  # what the copy takes
    trigram: bool = False  # pg_trgm is installed in this database
    version_num: int = 0


def read_workload(
    conn: psycopg.Connection[Any], statements: list[Statement] | None, cover: float
) -> LiveReading:
    """The statements (`statements`, or pg_stat_statements' heaviest) with their plans
    and tables, on `conn`: an autocommit, read-only connection; `cover`: the share of
    the execution time the statements taken make up (every write is taken)."""
    version = conn.info.server_version
    if statements is None:
        rows = dict_rows(conn, load("source_statements", version))
        statements = chosen([SourceStatement(**r) for r in rows], cover)
    reading = LiveReading(statements, version_num=version)
    for s in statements:
        reason = _refusal(conn, s.query)
        if reason is None:
            try:
                reading.plans[s.id] = generic_plan(conn, s.query)
            except PlanError as e:
                reason = str(e)
        if reason is not None:
            reading.refused[s.id] = reason
    read = sorted({t for p in reading.plans.values() for t in relations(p)})
    reading.roots = {
        r["name"]: r["root"]
        for r in dict_rows(conn, load("index_roots", version), {"tables": read})
    }
    names = sorted({reading.roots.get(t, t) for t in read})
    for sid, plan in reading.plans.items():
        target = written_table(plan)
        if target is not None:
            reading.writes_to[sid] = reading.roots.get(target, target)
    reading.tables = _tables(conn, names)
    named = [n for s in statements if s.id in reading.plans for n in relations_named(s.query)]
    wanted = tuple(dict.fromkeys([*names, *named]))
    reading.copy = copy_list(wanted, read_relations(conn, wanted))
    reading.trigram = bool(
        dict_rows(conn, "select 1 as x from pg_extension where extname = 'pg_trgm'")
    )
    return reading


def relations(plan: Plan) -> list[str]:
    """The user tables a plan reads or writes, schema-qualified (each part as
    quote_ident writes it)."""
    out = []
    for _d, node in nodes(plan):
        if "Relation Name" in node and node.get("Schema", "public") not in SYSTEM_SCHEMAS:
            name = qualified(str(node.get("Schema", "public")), str(node["Relation Name"]))
            if name not in out:
                out.append(name)
    return out


def written_table(plan: Plan) -> str | None:
    if plan.get("Node Type") == "ModifyTable" and "Relation Name" in plan:
        return qualified(str(plan.get("Schema", "public")), str(plan["Relation Name"]))
    return None


def _refusal(conn: psycopg.Connection[Any], query: str) -> str | None:
    """Why `query` cannot be explained here, found without sending it, or None."""
    try:
        parameter_count(query)
        names = relations_named(query)
    except ParseError as e:
        return f"does not parse: {e}"
    except PlanError as e:
        return str(e)
    for name in names:
        row = dict_rows(
            conn,
            "select to_regclass(%(n)s) is not null as found, "
            "coalesce(has_table_privilege(to_regclass(%(n)s), 'SELECT'), false) as readable",
            {"n": name},
        )[0]
        if not row["found"]:
            return f"no table {name} here (or a CTE's name this check does not know)"
        if not row["readable"]:
            return f"this role may not read {name}: grant it SELECT to have the statement checked"
    return None


def _tables(conn: psycopg.Connection[Any], names: list[str]) -> dict[str, TableFacts]:
    if not names:
        return {}
    version = conn.info.server_version
    params = {"tables": names}
    columns: dict[str, dict[str, ColumnStats]] = {n: {} for n in names}
    for r in dict_rows(conn, load("index_columns", version), params):
        stats = ColumnStats(r["width"], r["distinct_values"], r["type_name"])
        columns[r["table_name"]][r["column_name"]] = stats
    indexes: dict[str, list[ExistingIndex]] = {n: [] for n in names}
    for r in dict_rows(conn, load("index_existing", version), params):
        indexes[r["table_name"]].append(existing_index(r))
    return {
        r["name"]: TableFacts(
            name=r["name"],
            rows=float(r["rows"]),
            pages=int(r["pages"]),
            columns=columns.get(r["name"], {}),
            indexes=tuple(indexes.get(r["name"], [])),
            inserts=int(r["inserts"]),
            updates=int(r["updates"]),
            hot_updates=int(r["hot_updates"]),
            deletes=int(r["deletes"]),
        )
        for r in dict_rows(conn, load("index_tables", version), params)
    }


def existing_index(row: dict[str, Any]) -> ExistingIndex:
    """An index as the catalog describes it (index_existing.sql's row)."""
    count = int(row["key_count"])
    options = list(row["options"] or [])
    keys = []
    for i, text in enumerate(row["columns"][:count]):
        expr = str(text)
        bare = expr[1:-1] if expr.startswith("(") and expr.endswith(")") else expr
        column = unquoted(bare)
        columns = (column,) if column is not None else ()
        desc = bool(options[i] & 1) if i < len(options) else False
        keys.append(Key(bare, columns, desc))
    opclasses, collations = key_classes(row["definition"])
    return ExistingIndex(
        name=row["name"],
        table=row["table_name"],
        keys=tuple(keys),
        include=tuple(unquoted(str(c)) or str(c) for c in row["columns"][count:]),
        predicate=row["predicate"],
        method=row["method"],
        valid=bool(row["valid"]),
        opclasses=opclasses,
        collations=collations,
    )
