"""The labs `pgopt tune --measure` runs, as lab.toml fields (through the same checks
as any lab; the lab files are read, nothing else is done here).

1. The comparison: the server's defaults, pgtune's profile and pgopt's, as three
   steps of one workload, interleaved in random order per round. pgtune's step
   derives from the defaults, pgopt's from pgtune's (so the engine's verdict for
   pgopt is against pgtune, and against the defaults as its baseline); a setting
   pgtune sets and pgopt does not is set back to the server's default there.
2. The ablation: the winner (or the profile the user named) as the baseline,
   then one step per setting with only that setting back at the server's default:
   each verdict says whether that setting mattered.

Workloads: the batch lab (timed phases), pgbench's TPC-B-like or select-only
script on the standard pgbench tables (the smoke lab's dataset), or the user's
own A/B's workload (its A step: `comparison_steps` and `ablation_steps` make the
steps from it, and `pgopt ab`'s machinery copies the data).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ..lab.catalog import LABS_DIR
from ..lab.load import LAB_FILE
from .facts import Profiled

WORKLOADS = {
    "batch": ("batch", None, "dw", 2048),  # lab, builtin script, pgtune's type, MB at scale 1
    "tpcb": ("smoke", "tpcb-like", "oltp", 16),
    "select": ("smoke", "select-only", "oltp", 16),
}


def data_mb(workload: str, scale: float) -> int:
    """About how much data the workload builds at `scale` (a profile's db size)."""
    return max(1, round(WORKLOADS[workload][3] * scale))


def pgtune_type(workload: str) -> str:
    return WORKLOADS[workload][2]


def base_lab(workload: str) -> tuple[dict[str, Any], Path]:
    """A built-in workload's lab fields, its first step under "first_step" (what the
    profiles' steps derive from), and its folder."""
    lab, script, _, _ = WORKLOADS[workload]
    folder = LABS_DIR / lab
    raw = tomllib.loads((folder / LAB_FILE).read_text())
    first = dict(raw.pop("steps")[0])
    for key in ("reported", "note", "title", "name", "settings"):
        first.pop(key, None)
    if script:
        first["scripts"] = [{"builtin": script}]
    for key in ("seed", "article"):
        raw.pop(key, None)
    raw["first_step"] = first
    return raw, folder


def comparison_steps(first: dict[str, Any], pgtune: Profiled, pgopt: Profiled) -> list[Any]:
    """Defaults, pgtune (from the defaults) and pgopt (from pgtune, its settings that
    pgtune sets and pgopt does not put back to the server's default)."""
    back_to_default = {
        name: pgtune.defaults[name] for name in pgtune.settings if name not in pgopt.settings
    }
    return [
        {**first, "name": "defaults", "title": "server defaults"},
        {"name": "pgtune", "title": pgtune.title, "from": "defaults", "settings": pgtune.settings},
        {
            "name": "pgopt",
            "title": pgopt.title,
            "from": "pgtune",
            "settings": {**back_to_default, **pgopt.settings},
        },
    ]


def ablation_steps(first: dict[str, Any], start: Profiled) -> list[Any]:
    """The profile the ablation starts from (the winner, or the one the user named),
    then one step per setting with only that one back at the default."""
    steps: list[dict[str, Any]] = [
        {**first, "name": start.name, "title": start.title, "settings": start.settings}
    ]
    for name in start.settings:
        if name in start.at_default:
            continue  # setting it back would change nothing
        steps.append(
            {
                "name": f"without_{name}",
                "title": f"{name} back to {start.defaults[name]}",
                "from": start.name,
                "settings": {name: start.defaults[name]},
            }
        )
    return steps
