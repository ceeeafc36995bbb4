"""`pgopt tune --measure`: the server's defaults, pgtune's profile and pgopt's on one
workload, interleaved, then an ablation from the winner (tune/measure_lab.py
writes the two labs; the lab engine runs them). The tune folder holds both runs
(compare/, ablation/, each with its result.json and reports), the chosen
configuration (tune.conf) and tune.json (schema "pgopt.tune-run/1": the inputs, both
profiles, the verdicts, and which settings mattered)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..ab.lab import StepsOf
from ..ab.run import AbOptions, run_ab
from ..ab.spec import AbFlags, AbSpec, read_spec
from ..consoles import err, out, say_written
from ..lab.load import lab_from_dict
from ..model.result import LabResult
from ..running.launch import run_lab
from ..running.options import RunOptions
from ..servers.setting_units import server_value
from ..servers.settings import SettingChange
from ..store import new_run_dir, write_atomic
from . import output
from .choice import choose
from .facts import Profiled, ServerSettings
from .inputs import Given
from .measure_lab import WORKLOADS, ablation_steps, base_lab, comparison_steps, data_mb, pgtune_type
from .measure_summary import report_markdown, summary, summary_lines
from .profile import Inputs, derive, profiles
from .safety import MemoryCheck, fitting_work_mem, memory_check
from .settings_check import Checked, Refused, check

InputsOf = Callable[[Given, ServerSettings], tuple[Inputs, dict[str, Any]]]


@dataclass(frozen=True)
class MeasureOptions:
    """What `tune --measure` runs: the labs' run options, the workload (a built-in one's
    name or an ab.toml), pgtune's database type, whether --db-size was given, and the
    ablation (after a winner, or from the profile `ablate_from` names)."""

    run: RunOptions
    workload: str
    pgtune_type: str | None = None
    db_size_given: bool = False
    ablation: bool = True
    ablate_from: str | None = None


def measure(
    options: MeasureOptions,
    given: Given,
    target: ServerSettings,
    inputs_of: InputsOf,
    *,
    contexts: Mapping[str, str] | None = None,
) -> None:
    """Run the comparison and the ablation; with --dry-run print their plans (then
    `contexts`, the settings' contexts from the binaries, stand in for a server: the
    profiles are as derived, not yet held to the server's bounds)."""
    workload, run = options.workload, options.run
    ab = None if workload in WORKLOADS else read_spec(Path(workload), AbFlags(), Path.cwd())
    scale = run.scale or (0.01 if run.quick and workload == "batch" else 1.0)
    given = replace(
        given,
        db_bytes=given.db_bytes or (data_mb(workload, scale) * 2**20 if not ab else 2**30),
        db_type=options.pgtune_type or (pgtune_type(workload) if not ab else "web"),
    )
    inputs, sources = inputs_of(given, target)
    if not options.db_size_given:
        sources["db_size"] = (
            f"the {workload} workload's data at scale {scale:g}"
            if not ab
            else "assumed 1 GB for the A/B's data (--db-size gives it)"
        )
    profiled, texts = {}, {}
    for name in ("pgtune", "pgopt"):
        if contexts is not None:
            profiled[name] = _as_derived(name, inputs, contexts)
            continue
        profiled[name], texts[name] = _profiled(name, inputs, target, bool(run.dsn))
    folder = None
    if not run.dry_run:
        folder = new_run_dir("tune", run.out_dir)
        (folder / "raw").rmdir()  # the runs keep theirs in compare/ and ablation/
    runner = _Runner(workload, ab, replace(run, scale=scale), folder)
    compared = runner("compare", lambda first: comparison_steps(first, *profiled.values()))
    named = options.ablate_from
    if compared is None or folder is None:
        if options.ablation:  # --dry-run: the ablation's plan too, from a profile
            ablated_plan = named or "pgopt"
            when = "from the profile named" if named else "only if a profile wins; pgopt's"
            out.print(f"then the ablation ({when}):", highlight=False)
            runner("ablation", lambda first: ablation_steps(first, profiled[ablated_plan]))
        return
    choice = choose(compared, named)
    err.print(f"[tune] {choice.why}", markup=False)
    start = named or choice.winner
    ablated = None
    if options.ablation and start is not None:
        err.print(
            f"[tune] the ablation: each of {start}'s settings back to its default", markup=False
        )
        ablated = runner("ablation", lambda first: ablation_steps(first, profiled[start]))
    elif options.ablation:
        err.print(
            "[tune] no ablation: it starts from a winner (--ablate-from pgopt|pgtune "
            "names a profile to start from)",
            markup=False,
        )
    accepted, refused = texts[choice.held] if choice.held else ((), ())
    accepted, memory = _within_memory(accepted, target, inputs.connections, inputs.ram_mb)
    name = workload if not ab else Path(workload).name
    lines = [f"pgopt tune --measure on {name}: {choice.why}", memory.describe()]
    write_atomic(folder / "tune.conf", output.conf(lines, accepted, refused))
    doc = summary(
        inputs.names(), sources, compared, ablated, choice, start, profiled, memory.describe()
    )
    write_atomic(folder / "tune.json", json.dumps(doc, indent=2) + "\n")
    write_atomic(folder / "report.md", report_markdown(doc, name))
    for line in summary_lines(doc):
        out.print(line, markup=False, highlight=False)
    out.print(f"configuration: {folder / 'tune.conf'}", highlight=False)
    say_written([folder / "report.md"])


def _as_derived(name: str, inputs: Inputs, contexts: Mapping[str, str]) -> Profiled:
    """A profile as derived, for a plan: the settings this server version has."""
    profile = profiles()[name]
    settings = {d.name: d.value for d in derive(profile, inputs) if d.name in contexts}
    title = f"{profile.title} ({inputs.db_type})" if name == "pgtune" else profile.title
    return Profiled(name, title, settings, {n: "default" for n in settings})


def _profiled(
    name: str, inputs: Inputs, target: ServerSettings, on_dsn: bool
) -> tuple[Profiled, tuple[tuple[Checked, ...], tuple[Refused, ...]]]:
    """A profile's settings as the server takes them (on --dsn: those a reload applies)."""
    profile = profiles()[name]
    accepted, refused = check(derive(profile, inputs), target.pg_settings)
    if on_dsn:
        restart = [c for c in accepted if c.restart]
        accepted = tuple(c for c in accepted if not c.restart)
        if restart:
            names = ", ".join(c.name for c in restart)
            err.print(f"[tune] {name}: left out on --dsn (restart): {names}", markup=False)
        accepted = _settable(name, accepted, target)
    for r in refused:
        err.print(f"[tune] {name}: left out {r.name} = {r.value}: {r.why}", markup=False)
    title = f"{profile.title} ({inputs.db_type})" if name == "pgtune" else profile.title
    profiled = Profiled(
        name,
        title,
        {c.name: c.value for c in accepted},
        {c.name: c.default for c in accepted},
        frozenset(c.name for c in accepted if c.is_default),
    )
    return profiled, (accepted, refused)


def _settable(
    name: str, accepted: tuple[Checked, ...], target: ServerSettings
) -> tuple[Checked, ...]:
    """The settings of a profile that the role of --dsn may change; the others said,
    with what would let it (on a managed server, none of the server-wide ones)."""
    rights = target.rights
    if rights is None:
        return accepted

    def change(c: Checked) -> SettingChange:
        return SettingChange(c.name, c.value, str(target.pg_settings[c.name]["context"]))

    barred = [c for c in accepted if rights.refused([change(c)])]
    why = rights.refused(change(c) for c in barred)
    if why:
        err.print(f"[tune] {name}: left out on --dsn: {why}", markup=False, soft_wrap=True)
    return tuple(c for c in accepted if c not in barred)


class _Runner:
    """Runs a lab of tune's steps on the workload: a built-in one, or an A/B's (its data
    copied and its workload made as `pgopt ab` does)."""

    def __init__(
        self, workload: str, ab: AbSpec | None, options: RunOptions, folder: Path | None
    ) -> None:
        self.workload, self.ab, self.options, self.folder = workload, ab, options, folder

    def __call__(self, kind: str, steps_of: StepsOf) -> LabResult | None:
        if self.ab is not None:
            out_dir = self.folder / kind if self.folder else None
            # each profile is measured as it stands, not on top of the source's settings
            options = AbOptions(replace(self.options, out_dir=out_dir), source_settings=False)
            return run_ab(self.ab, options, steps_of)
        raw, lab_folder = base_lab(self.workload)
        raw["title"] = f"tune ({kind}) on {self.workload}: {raw['title']}"
        raw["steps"] = steps_of(raw.pop("first_step"))
        lab = lab_from_dict(raw, lab_folder, where="pgopt tune", name="tune")
        run_dir = None if self.folder is None else new_run_dir("tune", self.folder / kind)
        return run_lab(lab, self.options, run_dir)


def _within_memory(
    accepted: tuple[Checked, ...], target: ServerSettings, connections: int, ram_mb: int
) -> tuple[tuple[Checked, ...], MemoryCheck]:
    """The winner's settings, work_mem lowered if that is what it takes to pass the
    memory check (said in the setting's note), and the check (for the connections the
    profile sets, if it does: pgtune's)."""
    settings = {c.name: c.value for c in accepted}
    connections = int(settings.get("max_connections", connections))
    memory = memory_check(settings, target.pg_settings, connections, ram_mb * 2**20)
    fitted = fitting_work_mem(memory)
    if fitted is None:
        return accepted, memory
    value = f"{fitted // 2**20}MB"
    note = f"lowered from {settings.get('work_mem', 'the default')} to pass the memory check"
    default = server_value(target.pg_settings["work_mem"])
    kept = tuple(c for c in accepted if c.name != "work_mem")
    work_mem = Checked("work_mem", value, "the memory check", False, default, note)
    settings["work_mem"] = value
    fitted_check = memory_check(settings, target.pg_settings, connections, ram_mb * 2**20)
    return (*kept, work_mem), fitted_check
