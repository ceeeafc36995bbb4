"""A checked configuration written out (pure): a postgresql.conf snippet with a
comment per value, ALTER SYSTEM statements, or JSON (schema "pgopt.tune/1").
Each says which settings need a restart, and what was left out and why."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .settings_check import Checked, Refused

SCHEMA = "pgopt.tune/1"
FORMATS = ("conf", "sql", "json")


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def conf(header: Iterable[str], settings: Iterable[Checked], refused: Iterable[Refused]) -> str:
    lines = [f"# {line}" for line in header]
    for s in settings:
        restart = " [restart]" if s.restart else ""
        note = f" ({s.note})" if s.note else ""
        lines += ["", f"# {s.reason}{note}{restart}", f"{s.name} = {_quote(s.value)}"]
    for r in refused:
        lines += ["", f"# left out: {r.name} = {r.value}: {r.why}"]
    return "\n".join(lines) + "\n"


RUN_AS = (
    "run as a superuser: ALTER SYSTEM needs one (from PostgreSQL 15, or a role granted ALTER "
    "SYSTEM ON PARAMETER for each setting and EXECUTE on pg_reload_conf()); a managed "
    "server (RDS, Cloud SQL, Azure) gives neither and takes these values in its parameter "
    "group or flags (--format conf lists them)"
)


def sql(header: Iterable[str], settings: Iterable[Checked], refused: Iterable[Refused]) -> str:
    lines = [f"-- {line}" for line in header] + [f"-- {RUN_AS}"]
    restart = []
    for s in settings:
        note = f" ({s.note})" if s.note else ""
        lines += ["", f"-- {s.reason}{note}", f"ALTER SYSTEM SET {s.name} = {_quote(s.value)};"]
        if s.restart:
            restart.append(s.name)
    for r in refused:
        lines += ["", f"-- left out: {r.name} = {r.value}: {r.why}"]
    lines += ["", "SELECT pg_reload_conf();"]
    if restart:
        lines.append(f"-- then restart the server for: {', '.join(restart)}")
    return "\n".join(lines) + "\n"


def document(
    inputs: dict[str, Any],
    profile: str,
    settings: Iterable[Checked],
    refused: Iterable[Refused],
) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "profile": profile,
        "inputs": inputs,
        "settings": [
            {
                "name": s.name,
                "value": s.value,
                "reason": s.reason,
                "restart": s.restart,
                "default": s.default,
                **({"note": s.note} if s.note else {}),
            }
            for s in settings
        ],
        "left_out": [{"name": r.name, "value": r.value, "why": r.why} for r in refused],
    }


def as_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2) + "\n"
