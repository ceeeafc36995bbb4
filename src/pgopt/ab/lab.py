"""An A/B as a lab: two fresh steps, `a` and `b`, that the engine runs like any other.

Each timed run starts from the same data: pgopt empties its database (reset.sql:
every schema dropped, pg_stat_statements kept when pgopt had installed it), runs
the data's SQL files, then the variant's own SQL, then ANALYZE, so B's index or
migration never leaks into A's runs. Rounds run A and B in a random order with
the same pgbench seed; B's verdict is against A. The lab goes through
`lab_from_dict`, so it is checked as a lab file is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..lab.load import lab_from_dict
from ..lab.spec import Lab, ReplaySpec
from .spec import AbSpec, Script, Variant

RESET_SQL = """\
-- pgopt ab: back to an empty database before the data is built again (pgopt's own
-- database, never yours: with --dsn pgopt works in pgopt_lab)
do $$
declare
    had_statements boolean := exists (
        select 1 from pg_extension where extname = 'pg_stat_statements');
    s name;
begin
    for s in select nspname from pg_namespace
             where nspname !~ '^pg_' and nspname <> 'information_schema'
    loop
        execute format('drop schema %I cascade', s);
    end loop;
    create schema public;
    if had_statements then
        create extension pg_stat_statements;
    end if;
end
$$;
"""

StepsOf = Callable[[dict[str, Any]], list[dict[str, Any]]]

ANALYZE_SQL = "-- pgopt ab: fresh statistics, as a live database would have\nanalyze;\n"


def ab_lab(
    spec: AbSpec,
    folder: Path,
    steps_of: StepsOf | None = None,
    replay: ReplaySpec | None = None,
) -> Lab:
    """The lab of `spec`; its generated SQL files are written into `folder`.
    `steps_of`, given A's step, makes other steps instead of A and B (pgopt tune
    measures its profiles on the user's workload this way); `replay`: what a
    synthesized workload's first step is measured against for its fidelity."""
    folder.mkdir(parents=True, exist_ok=True)
    reset = folder / "reset.sql"
    reset.write_text(RESET_SQL)
    analyze = folder / "analyze.sql"
    analyze.write_text(ANALYZE_SQL)
    raw: dict[str, Any] = {
        "title": spec.title,
        "description": _description(spec),
        "dataset": {"setup": [str(reset), *map(str, spec.setup)]},
        "metric": {"name": "transactions", "unit": "tx/s"},
        "run": {"clients": 2, "duration": 10, "reps": "auto", **spec.run},
        "quick": {"duration": 3, "reps": 3},
        "steps": [
            _step("a", spec.a, spec.scripts, analyze),
            _step("b", spec.b, (), analyze),
        ],
    }
    if steps_of is not None:
        raw["steps"] = steps_of(raw["steps"][0])
    lab = lab_from_dict(raw, folder, where="pgopt ab", name="ab")
    return replace(lab, replay=replay) if replay is not None else lab


def _step(
    name: str, variant: Variant, scripts: tuple[Script, ...], analyze: Path
) -> dict[str, Any]:
    step: dict[str, Any] = {
        "name": name,
        "title": variant.title,
        "fresh": True,
        "schema": [*map(str, variant.sql), str(analyze)],
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
    workload = ", ".join(f"{s.path.name}@{s.weight}" for s in spec.scripts)
    return (
        f"A/B of a workload ({workload}) on data built by {data}: each run starts from "
        "the same data, A and B in a random order per round; B's verdict is against A."
    )
