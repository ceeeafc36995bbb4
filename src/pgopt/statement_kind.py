"""What a statement does, read by PostgreSQL's own parser (pure): whether it writes
(and what, where), locks rows, controls the transaction (BEGIN, COMMIT and its AND
CHAIN, ROLLBACK, a savepoint, a prepared transaction) or sets the session. The one
classifier of the replay's selection, the log capture's transactions, the index
advisor, advise and the engine's read-only templates.

Read from libpg_query's parse tree as JSON (pglast's `parse_sql_json`: about 6 µs a
statement where building pglast's node objects takes 120, so a log of a million
lines is read in seconds). Comments, parentheses and case are the parser's to
read, so `/* app */ UPDATE`, `-- c⏎INSERT` and `(INSERT ...)` are what they are.

A text the parser cannot read (pg_stat_statements cuts a long one at
track_activity_query_size) is read from its tokens by PostgreSQL's own scanner:
its first keyword, past comments and parentheses, says whether it writes; nothing
else is claimed of it (`parsed` False).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache
from itertools import pairwise
from typing import Any

from pglast.parser import ParseError, parse_sql_json, scan


class Control(Enum):
    """A transaction control statement."""

    BEGIN = "begin"  # BEGIN, START TRANSACTION
    COMMIT = "commit"  # COMMIT, END
    ROLLBACK = "rollback"  # ROLLBACK, ABORT
    SAVEPOINT = "savepoint"
    RELEASE = "release"
    ROLLBACK_TO = "rollback to"
    PREPARE = "prepare transaction"
    COMMIT_PREPARED = "commit prepared"
    ROLLBACK_PREPARED = "rollback prepared"


_CONTROL = {
    "TRANS_STMT_BEGIN": Control.BEGIN,
    "TRANS_STMT_START": Control.BEGIN,
    "TRANS_STMT_COMMIT": Control.COMMIT,
    "TRANS_STMT_ROLLBACK": Control.ROLLBACK,
    "TRANS_STMT_SAVEPOINT": Control.SAVEPOINT,
    "TRANS_STMT_RELEASE": Control.RELEASE,
    "TRANS_STMT_ROLLBACK_TO": Control.ROLLBACK_TO,
    "TRANS_STMT_PREPARE": Control.PREPARE,
    "TRANS_STMT_COMMIT_PREPARED": Control.COMMIT_PREPARED,
    "TRANS_STMT_ROLLBACK_PREPARED": Control.ROLLBACK_PREPARED,
}
_WRITES = {
    "InsertStmt": "insert",
    "UpdateStmt": "update",
    "DeleteStmt": "delete",
    "MergeStmt": "merge",
}
_WRITE_TOKENS = {"INSERT": "insert", "UPDATE": "update", "DELETE_P": "delete", "MERGE": "merge"}
# statements that set or show the session's state, or free what it prepared
_SESSION = frozenset(
    {"VariableSetStmt", "VariableShowStmt", "DiscardStmt", "DeallocateStmt", "PrepareStmt"}
)
_PLANNABLE = frozenset({"SelectStmt", *_WRITES})


@dataclass(frozen=True)
class StatementKind:
    """What one statement (or each of a text's statements together) does."""

    parsed: bool
    writes: str | None = None  # insert, update, delete, merge, copy, select into
    relation: tuple[str | None, str] | None = None  # the table written: (schema, name)
    sets: tuple[str, ...] = ()  # the columns an UPDATE sets
    locks_rows: bool = False  # SELECT ... FOR UPDATE / SHARE
    control: Control | None = None
    chain: bool = False  # COMMIT AND CHAIN, ROLLBACK AND CHAIN: a new one starts
    session: str | None = None  # the setting a SET or RESET names ("" for others)
    plannable: bool = False  # one SELECT, INSERT, UPDATE, DELETE or MERGE
    explained: bool = False  # EXPLAIN of one (not plannable itself)
    statements: int = 1

    @property
    def target(self) -> str | None:
        """The table written as the statement names it: `schema.table` or `table`."""
        if self.relation is None:
            return None
        schema, name = self.relation
        return f"{schema}.{name}" if schema else name

    @property
    def opens(self) -> bool:
        """Whether a transaction is open after it (BEGIN, or an end AND CHAIN)."""
        return self.control is Control.BEGIN or (self.chain and self.ends)

    @property
    def ends(self) -> bool:
        """Whether it ends the session's transaction (COMMIT, ROLLBACK, PREPARE
        TRANSACTION; not ROLLBACK TO SAVEPOINT, nor COMMIT PREPARED, which runs
        outside one)."""
        return self.control in (Control.COMMIT, Control.ROLLBACK, Control.PREPARE)

    @property
    def rolls_back(self) -> bool:
        return self.control is Control.ROLLBACK


@lru_cache(maxsize=4096)
def kind_of(query: str) -> StatementKind:
    """What `query` does (each text read once: a log repeats its BEGINs and COMMITs)."""
    try:
        tree = json.loads(parse_sql_json(query))
    except ParseError:
        return _from_tokens(query)
    statements = [s.get("stmt", {}) for s in tree.get("stmts", ())]
    kinds = [_one(s) for s in statements]
    if len(kinds) == 1:
        return kinds[0]
    written = next((k for k in kinds if k.writes), None)
    return StatementKind(
        parsed=True,
        writes=written.writes if written else None,
        relation=written.relation if written else None,
        locks_rows=any(k.locks_rows for k in kinds),
        statements=len(kinds),
    )


def _one(stmt: dict[str, Any]) -> StatementKind:
    ((node, body),) = stmt.items() if stmt else (("", {}),)
    if node == "TransactionStmt":
        return StatementKind(True, control=_CONTROL[body["kind"]], chain=bool(body.get("chain")))
    if node in _SESSION:
        return StatementKind(True, session=str(body.get("name") or ""))
    if node == "ExplainStmt":  # EXPLAIN ANALYZE runs it
        inner = _one(body.get("query", {}))
        return replace(inner, plannable=False, explained=inner.plannable)
    if node == "CopyStmt":
        return StatementKind(
            True,
            writes="copy" if body.get("is_from") else None,
            relation=_name(body.get("relation")),
        )
    if node == "CreateTableAsStmt":
        return StatementKind(True, writes="select into", relation=_name(body["into"].get("rel")))
    written = next(_writes(stmt), None)
    locks = any("LockingClause" in n for n in _nodes(stmt))
    into = node == "SelectStmt" and "intoClause" in body
    kind, relation, sets = written or (None, None, ())
    if into:
        kind, relation = kind or "select into", relation or _name(body["intoClause"].get("rel"))
    return StatementKind(
        True,
        writes=kind,
        relation=relation,
        sets=sets,
        locks_rows=locks,
        plannable=node in _PLANNABLE,
    )


def _writes(tree: Any) -> Iterator[tuple[str, tuple[str | None, str] | None, tuple[str, ...]]]:
    """Each write in `tree`, the statement first, then its WITH's: (verb, table, SET)."""
    for node in _nodes(tree):
        for name, body in node.items():
            if name in _WRITES:
                sets: tuple[str, ...] = ()
                if name == "UpdateStmt":
                    targets = body.get("targetList", ())
                    sets = tuple(str(t["ResTarget"].get("name")) for t in targets)
                yield _WRITES[name], _name(body.get("relation")), sets


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every node of a JSON parse tree, breadth first (the statement before its parts)."""
    queue = deque([tree])
    while queue:
        item = queue.popleft()
        if isinstance(item, dict):
            yield item
            queue.extend(item.values())
        elif isinstance(item, list):
            queue.extend(item)


def _name(relation: dict[str, Any] | None) -> tuple[str | None, str] | None:
    """A RangeVar's (schema or None, table), as the statement names them."""
    if not relation:
        return None
    schema = relation.get("schemaname")
    return (str(schema) if schema else None), str(relation.get("relname"))


_SKIPPED = frozenset({"C_COMMENT", "SQL_COMMENT", "ASCII_40"})  # comments, "("


def _from_tokens(query: str) -> StatementKind:
    """An unreadable text's first keyword, by PostgreSQL's scanner: a write's verb,
    or, after WITH, the first write's verb not part of FOR UPDATE."""
    try:
        tokens = [t.name for t in scan(query) if t.name not in _SKIPPED]
    except ParseError:  # an unterminated string or comment
        return StatementKind(parsed=False)
    if not tokens:
        return StatementKind(parsed=False)
    if tokens[0] in _WRITE_TOKENS:
        return StatementKind(parsed=False, writes=_WRITE_TOKENS[tokens[0]])
    if tokens[0] == "WITH":
        for before, token in pairwise(tokens):
            if token in _WRITE_TOKENS and before not in ("FOR", "KEY"):
                return StatementKind(parsed=False, writes=_WRITE_TOKENS[token])
    return StatementKind(parsed=False)
