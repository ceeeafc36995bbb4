"""The labs that ship with pgopt (src/pgopt/labs/<name>/) and NAME|PATH resolution."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from .load import LAB_FILE, load_lab
from .spec import Lab

LABS_DIR = Path(__file__).resolve().parent.parent / "labs"
# The seeds' labs, in seed order (ingest: seed 000's checklist), then beyond one server
# (replicas: seeds 000 and 003; shards: seed 003): `lab run all` runs them in this order.
DEMO_ORDER = (
    "login",
    "ingest",
    "queue",
    "batch",
    "keylookup",
    "sequence",
    "replicas",
    "shards",
)


def builtin_labs() -> list[Lab]:
    """Built-in labs, the article labs in seed order first."""
    folders = [p.parent for p in LABS_DIR.glob(f"*/{LAB_FILE}")]
    order = {name: i for i, name in enumerate(DEMO_ORDER)}
    folders.sort(key=lambda p: (order.get(p.name, len(order)), p.name))
    return [load_lab(f) for f in folders]


def resolve_lab(name_or_path: str) -> Lab:
    """A built-in lab by name, or a user's lab folder by path."""
    candidate = Path(name_or_path)
    if (candidate / LAB_FILE).is_file():
        return load_lab(candidate)
    builtin = LABS_DIR / name_or_path
    if "/" not in name_or_path and (builtin / LAB_FILE).is_file():
        return load_lab(builtin)
    if candidate.exists() or "/" in name_or_path:
        raise UsageError(f"{name_or_path}: not a lab folder (no {LAB_FILE})")
    known = ", ".join(lab.name for lab in builtin_labs())
    raise UsageError(f"unknown lab {name_or_path!r} (known: {known}; or give a lab folder path)")
