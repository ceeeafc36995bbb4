"""Labs as data: the spec dataclasses, the lab.toml loader, and the built-in catalog."""

from .catalog import builtin_labs, resolve_lab
from .load import lab_from_dict, load_lab
from .spec import Check, Lab, Phase, Reported, Step

__all__ = [
    "Check",
    "Lab",
    "Phase",
    "Reported",
    "Step",
    "builtin_labs",
    "lab_from_dict",
    "load_lab",
    "resolve_lab",
]
