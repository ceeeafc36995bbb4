"""Walking a statement parsed by PostgreSQL's own parser (pglast): every node under
one, for the checks that read SQL (ab's parameters, advise's locking clauses)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pglast import ast


def walk(node: Any) -> Iterator[Any]:
    """Every node under `node` (a node, or a tuple or list of them), itself included."""
    if isinstance(node, tuple | list):
        for item in node:
            yield from walk(item)
    elif isinstance(node, ast.Node):
        yield node
        for name in node:
            yield from walk(getattr(node, name))
