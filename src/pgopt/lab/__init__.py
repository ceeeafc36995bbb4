"""Labs as data: the spec dataclasses, the lab.toml loader, and the built-in catalog."""

from .catalog import builtin_labs, resolve_lab
from .load import load_lab
from .spec import Check, Lab, Phase, Reported, Step

__all__ = ["Check", "Lab", "Phase", "Reported", "Step", "builtin_labs", "load_lab", "resolve_lab"]
