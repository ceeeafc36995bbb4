"""An A/B as a lab: two fresh steps, `a` and `b`, that the engine runs like any other.

Each timed run starts from the same data, and B's index or migration never leaks
into A's runs: the data (the copy of the user's database, the setup files) is
built once, then each variant's own SQL and a VACUUM ANALYZE are applied once, to
a template database of its own; every run starts from its variant's template
(engine/templates.py). Rounds run A and B in a random order with the same pgbench
seed; B's verdict is against A. The lab goes through `lab_from_dict`, so it is
checked as a lab file is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..lab.load import lab_from_dict
from ..lab.spec import DataCopy, Lab, ReplaySpec
from ..pgbench.command import ScriptRef
from .spec import AbSpec, Variant

StepsOf = Callable[[dict[str, Any]], list[dict[str, Any]]]

SHOWN = 4  # scripts named in the description; past it, the first two and the last
VACUUM_SQL = """\
-- pgopt ab: hint bits and visibility maps as a live database has them (autovacuum's
-- work): a run reads pages no earlier reader has to write. Once, on the data every
-- variant is built from.
vacuum;
"""
ANALYZE_SQL = """\
-- pgopt ab: statistics as a live database has them, after the variant's SQL; the
-- vacuum skips the pages the data's vacuum left all-visible, and does what a
-- rewritten table needs
vacuum (analyze);
"""


def ab_lab(
    spec: AbSpec,
    folder: Path,
    steps_of: StepsOf | None = None,
    replay: ReplaySpec | None = None,
    copy: DataCopy | None = None,
) -> Lab:
    """The lab of `spec`; its generated SQL files are written into `folder`.
    `steps_of`, given A's step, makes other steps instead of A and B (pgopt tune
    measures its profiles on the user's workload this way); `replay`: what a
    synthesized workload's first step is measured against for its fidelity; `copy`:
    how the user's data was copied, for the time it took."""
    folder.mkdir(parents=True, exist_ok=True)
    # a physical copy is as old as the source: no vacuum, no new statistics, each
    # variant's own SQL alone (a logical copy is made to look lived-in instead)
    aged = copy is not None and copy.kind == "physical"
    analyze = folder / "analyze.sql"
    analyze.write_text(ANALYZE_SQL)
    vacuum = folder / "vacuum.sql"
    vacuum.write_text(VACUUM_SQL)
    raw: dict[str, Any] = {
        "title": spec.title,
        "description": _description(spec),
        "dataset": {"setup": [*map(str, spec.setup), *([] if aged else [str(vacuum)])]},
        "metric": {"name": "transactions", "unit": "tx/s"},
        # no warm-up unless asked for: every run starts from its variant's template,
        # cold for A and B alike (`warmup` in ab.toml brings the hot rows in first)
        "run": {"clients": 2, "duration": 10, "reps": "auto", "warmup": 0, **spec.run},
        "quick": {"duration": 3, "reps": 3, "warmup": spec.run.get("warmup", 0)},
        "steps": [
            _step("a", spec.a, spec.scripts, None if aged else analyze),
            _step("b", spec.b, (), None if aged else analyze),
        ],
    }
    if steps_of is not None:
        raw["steps"] = steps_of(raw["steps"][0])
    lab = lab_from_dict(raw, folder, where="pgopt ab", name="ab")
    return replace(lab, replay=replay, copy=copy)


def _step(
    name: str, variant: Variant, scripts: tuple[ScriptRef, ...], analyze: Path | None
) -> dict[str, Any]:
    step: dict[str, Any] = {
        "name": name,
        "title": variant.title,
        "fresh": True,
        "schema": [*map(str, variant.sql), *([str(analyze)] if analyze else [])],
    }
    own = variant.scripts or scripts
    if own:
        step["scripts"] = [{"file": str(s.path), "weight": s.weight} for s in own]
    if variant.settings:
        step["settings"] = dict(variant.settings)
    if variant.mode:
        step["mode"] = variant.mode
    return step


def _description(spec: AbSpec) -> str:
    data = ", ".join(p.name for p in spec.setup) or "each variant's own SQL"
    named = [f"{s.name}@{s.weight}" for s in spec.scripts]
    workload = ", ".join(named if len(named) <= SHOWN else [*named[:2], "…", named[-1]])
    if len(named) > SHOWN:
        workload = f"{len(named)} scripts: {workload}"
    return (
        f"A/B of a workload ({workload}) on data built by {data}: each run starts from "
        "the same data, A and B in a random order per round; B's verdict is against A."
    )
