"""Whether a lab's workloads may write (pure): read from their pgbench scripts with
PostgreSQL's own parser (pglast), for engine/templates.py, which lets a workload
that writes nothing run on its template itself.

A statement counts as reading only when it is a SELECT (or EXPLAIN of one) with no
INTO, no row lock (FOR UPDATE/SHARE) and no data-modifying WITH, or a transaction
command, SHOW, DEALLOCATE or a SET of anything but the read-only settings. Anything
else counts as writing, and so does a statement the parser cannot read. A
function that writes, called from a SELECT, is not seen here: the runs' sessions
are read-only, so it fails the run instead.
"""

from __future__ import annotations

import re

from pglast import split
from pglast.parser import ParseError

from ..lab.spec import Step
from ..statement_kind import StatementKind, kind_of

READ_ONLY_BUILTINS = frozenset({"select-only"})
_GUARDED = frozenset({"default_transaction_read_only", "transaction_read_only"})


def first_write(steps: list[Step]) -> str | None:
    """Why the steps' workloads may write, in words; None when none of them can."""
    for step in steps:
        if step.phases or step.probe:
            return f"step {step.name} is timed by phases or a probe, which may write"
        scripts = list(step.scripts)
        if step.background is not None:
            scripts += step.background.scripts
        for script in scripts:
            if script.builtin is not None:
                if script.builtin not in READ_ONLY_BUILTINS:
                    return f"pgbench's {script.builtin} script writes"
                continue
            assert script.path is not None
            found = script_write(script.path.read_text())
            if found is not None:
                return f"{script.path.name} writes ({found})"
    return None


def script_write(script: str) -> str | None:
    """The first statement of a pgbench script that may write, shortened; None when
    every statement only reads. A statement pglast cannot read counts as writing."""
    for statement in script_statements(script):
        kind = kind_of(statement)
        if not kind.parsed:
            return f"cannot read: {_short(statement)}"
        if not _reads_only(kind):
            return _short(statement)
    return None


def script_statements(script: str) -> list[str]:
    """The SQL of a pgbench script, its variables (`:name`) as parameters ($1):
    meta-commands (`\\set`, continued lines too) left out."""
    sql_lines: list[str] = []
    continued = False
    for line in script.splitlines():
        stripped = line.strip()
        if continued or stripped.startswith("\\"):
            continued = stripped.endswith("\\")
            continue
        sql_lines.append(line)
    text = _VARIABLE.sub("$1", "\n".join(sql_lines))
    try:
        return [s for s in split(text) if s.strip()]
    except ParseError:
        return [text]  # unreadable: judged, and refused, as a whole


def _reads_only(kind: StatementKind) -> bool:
    if kind.control is not None:
        return True
    if kind.session is not None:
        return kind.session.lower() not in _GUARDED
    query = kind.plannable or kind.explained
    return query and kind.writes is None and not kind.locks_rows


def _short(statement: str) -> str:
    one = " ".join(statement.split())
    return one if len(one) <= 60 else one[:57] + "..."


_VARIABLE = re.compile(r"(?<![:\w]):[A-Za-z_][A-Za-z0-9_]*")
