"""A field result.json leaves out when it has no value (model/codec.py reads the mark)."""

from __future__ import annotations

from dataclasses import field
from typing import Any

OMIT_IF_NONE = "omit_if_none"


def absent() -> Any:
    """A field result.json leaves out when it has no value: a run without pgbench has
    no tps, a step without phases no phases, an older file lacks what came later. The
    other optional fields are written as null, as they always were."""
    return field(default=None, metadata={OMIT_IF_NONE: True})
