"""The labs `pgopt tune --measure` runs, as lab.toml fields (through the same checks
as any lab; the lab files are read, nothing else is done here).

1. The comparison: the server's defaults, pgtune's profile and pgopt's, as three
   steps of one workload, interleaved in random order per round. pgtune's step
   derives from the defaults, pgopt's from pgtune's (so the engine's verdict for
   pgopt is against pgtune, and against the defaults as its baseline); a setting
   pgtune sets and pgopt does not is set back to the server's default there.
2. The ablation: the winner as the baseline, then one step per setting with only
   that setting back at the server's default: each verdict says whether that
   setting mattered.

Workloads: the batch lab (timed phases), or pgbench's TPC-B-like or select-only
script on the standard pgbench tables (the smoke lab's dataset).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lab.catalog import LABS_DIR
from ..lab.load import LAB_FILE

WORKLOADS = {
    "batch": ("batch", None, "dw", 2048),  # lab, builtin script, pgtune's type, MB at scale 1
    "tpcb": ("smoke", "tpcb-like", "oltp", 16),
    "select": ("smoke", "select-only", "oltp", 16),
}


@dataclass(frozen=True)
class Profiled:
    """A profile's settings as the server accepts them, and its defaults for those."""

    name: str
    title: str
    settings: dict[str, str]
    defaults: dict[str, str]  # the server's boot value of each setting
    at_default: frozenset[str] = frozenset()  # settings the profile sets to the default


def data_mb(workload: str, scale: float) -> int:
    """About how much data the workload builds at `scale` (a profile's db size)."""
    return max(1, round(WORKLOADS[workload][3] * scale))


def pgtune_type(workload: str) -> str:
    return WORKLOADS[workload][2]


def _base(workload: str) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """The workload's lab fields without its steps, its first step, and its folder."""
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
    return raw, first, folder


def comparison(workload: str, pgtune: Profiled, pgopt: Profiled) -> tuple[dict[str, Any], Path]:
    raw, first, folder = _base(workload)
    back_to_default = {
        name: pgtune.defaults[name] for name in pgtune.settings if name not in pgopt.settings
    }
    raw["title"] = f"tune: server defaults, {pgtune.title} and {pgopt.title} on {workload}"
    raw["description"] = (
        f"The {workload} workload under the server's defaults, {pgtune.title} and "
        f"{pgopt.title}, in a random order per round. pgtune's step is compared with the "
        "defaults; pgopt's with pgtune's (its what-changed lists the differences) and with "
        "the defaults."
    )
    raw["steps"] = [
        {**first, "name": "defaults", "title": "server defaults"},
        {"name": "pgtune", "title": pgtune.title, "from": "defaults", "settings": pgtune.settings},
        {
            "name": "pgopt",
            "title": pgopt.title,
            "from": "pgtune",
            "settings": {**back_to_default, **pgopt.settings},
        },
    ]
    return raw, folder


def ablation(workload: str, winner: Profiled) -> tuple[dict[str, Any], Path]:
    raw, first, folder = _base(workload)
    raw["title"] = f"tune: which of {winner.title}'s settings matter on {workload}"
    raw["description"] = (
        f"{winner.title} as the baseline, then each of its settings alone set back to the "
        "server's default: a step slower than the baseline is a setting that mattered."
    )
    steps: list[dict[str, Any]] = [
        {**first, "name": "winner", "title": winner.title, "settings": winner.settings}
    ]
    for name in winner.settings:
        if name in winner.at_default:
            continue  # setting it back would change nothing
        steps.append(
            {
                "name": f"without_{name}",
                "title": f"{name} back to {winner.defaults[name]}",
                "from": "winner",
                "settings": {name: winner.defaults[name]},
            }
        )
    raw["steps"] = steps
    return raw, folder
