"""`pgopt tune --measure`: the server's defaults, pgtune's profile and pgopt's on one
workload, interleaved, then an ablation from the winner (tune/measure_lab.py
writes the two labs; the lab engine runs them). The tune folder holds both runs
(compare/, ablation/, each with its result.json and reports), the chosen
configuration (tune.conf) and tune.json (schema "pgopt.tune-run/1": the inputs, both
profiles, the verdicts, and which settings mattered)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..ab.lab import StepsOf
from ..ab.spec import AbFlags, AbSpec, read_spec
from ..lab.load import lab_from_dict
from ..model.result import LabResult
from ..store import new_run_dir, write_atomic
from ..tune import output
from ..tune.choice import Choice, choose, verdict_text
from ..tune.facts import ServerSettings
from ..tune.inputs import Given
from ..tune.measure_lab import (
    WORKLOADS,
    Profiled,
    ablation_steps,
    base_lab,
    comparison_steps,
    data_mb,
    pgtune_type,
)
from ..tune.profile import Inputs, derive, profiles
from ..tune.safety import MemoryCheck, fitting_work_mem, memory_check
from ..tune.settings_check import Checked, Refused, check, server_value
from .ab import run_ab
from .app import err, out, say_written
from .running import run_lab

RUN_SCHEMA = "pgopt.tune-run/1"


InputsOf = Callable[[dict[str, Any], Given, ServerSettings], tuple[Inputs, dict[str, Any]]]


def measure(
    options: dict[str, Any],
    given: Given,
    target: ServerSettings,
    inputs_of: InputsOf,
    *,
    contexts: Mapping[str, str] | None = None,
) -> None:
    """Run the comparison and the ablation; with --dry-run print their plans (then
    `contexts`, the settings' contexts from the binaries, stand in for a server: the
    profiles are as derived, not yet held to the server's bounds)."""
    workload = options["workload"]
    ab = None if workload in WORKLOADS else read_spec(Path(workload), AbFlags(), Path.cwd())
    scale = options["scale"] or (0.01 if options["quick"] and workload == "batch" else 1.0)
    given = replace(
        given,
        db_bytes=given.db_bytes or (data_mb(workload, scale) * 2**20 if not ab else 2**30),
        db_type=options["pgtune_type"] or (pgtune_type(workload) if not ab else "web"),
    )
    inputs, sources = inputs_of(options, given, target)
    if not options["db_size"]:
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
        profiled[name], texts[name] = _profiled(name, inputs, target, bool(options["dsn"]))
    folder = None
    if not options["dry_run"]:
        folder = new_run_dir("tune", options["out_dir"])
        (folder / "raw").rmdir()  # the runs keep theirs in compare/ and ablation/
    run = _Runner(workload, ab, {**options, "scale": scale}, folder)
    compared = run("compare", lambda first: comparison_steps(first, *profiled.values()))
    named = options["ablate_from"]
    if compared is None or folder is None:
        if options["ablation"]:  # --dry-run: the ablation's plan too, from a profile
            ablated_plan = named or "pgopt"
            when = "from the profile named" if named else "only if a profile wins; pgopt's"
            out.print(f"then the ablation ({when}):", highlight=False)
            run("ablation", lambda first: ablation_steps(first, profiled[ablated_plan]))
        return
    choice = choose(compared, named)
    err.print(f"[tune] {choice.why}", markup=False)
    start = named or choice.winner
    ablated = None
    if options["ablation"] and start is not None:
        err.print(
            f"[tune] the ablation: each of {start}'s settings back to its default", markup=False
        )
        ablated = run("ablation", lambda first: ablation_steps(first, profiled[start]))
    elif options["ablation"]:
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


class _Runner:
    """Runs a lab of tune's steps on the workload: a built-in one, or an A/B's (its data
    copied and its workload made as `pgopt ab` does)."""

    def __init__(
        self, workload: str, ab: AbSpec | None, options: dict[str, Any], folder: Path | None
    ) -> None:
        self.workload, self.ab, self.options, self.folder = workload, ab, options, folder

    def __call__(self, kind: str, steps_of: StepsOf) -> LabResult | None:
        if self.ab is not None:
            out_dir = self.folder / kind if self.folder else None
            return run_ab(self.ab, {**self.options, "out_dir": out_dir}, steps_of)
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


def _verdict(step: Any, *, vs_baseline: bool = False) -> dict[str, Any]:
    ratio = step.ratio_vs_baseline if vs_baseline else step.ratio_vs_previous
    verdict = step.verdict_vs_baseline if vs_baseline else step.verdict_vs_previous
    return {
        "verdict": verdict.value,
        "ratio": ratio.median if ratio else None,
        "ci95": list(ratio.ci95) if ratio else None,
        "text": verdict_text(verdict.value, ratio),
    }


def summary(
    names: dict[str, float],
    sources: dict[str, Any],
    compared: LabResult,
    ablated: LabResult | None,
    choice: Choice,
    start: str | None,
    profiled: dict[str, Profiled],
    memory: str,
) -> dict[str, Any]:
    mattered = []
    if ablated is not None and start is not None:
        source = profiled[start]
        for step in ablated.steps[1:]:
            setting = step.name.removeprefix("without_")
            entry = {"setting": setting, "value": source.settings[setting]}
            entry |= {"default": source.defaults[setting], **_verdict(step)}
            mattered.append(entry)
    return {
        "schema": RUN_SCHEMA,
        "inputs": {**names, "sources": sources},
        "profiles": {k: v.settings for k, v in profiled.items()},
        "metric": compared.steps[0].metric.unit,
        "pgtune_vs_defaults": _verdict(compared.step("pgtune")),
        "pgopt_vs_pgtune": _verdict(compared.step("pgopt")),
        "pgopt_vs_defaults": _verdict(compared.step("pgopt"), vs_baseline=True),
        "winner": choice.winner,
        "held": choice.held,
        "why": choice.why,
        "ablated_from": start if ablated else None,
        "memory": memory,
        "ablation": mattered,
    }


def report_markdown(doc: dict[str, Any], workload: str) -> str:
    """tune's own page: the verdicts, the settings that mattered, where the runs are."""
    lines = [f"# pgopt tune --measure on {workload}", ""]
    lines += [f"- {line.strip()}" for line in summary_lines(doc)[:3]]
    if not doc["ablation"]:
        lines += [
            "",
            "No ablation was run: it starts from a winner or a profile named with"
            " --ablate-from (or --no-ablation said so).",
        ]
    else:
        lines += ["", "| setting | value | default | back to the default |", "|---|---|---|---|"]
    for a in doc["ablation"]:
        ratio = f" ×{a['ratio']:.2f} [{a['ci95'][0]:.2f}–{a['ci95'][1]:.2f}]" if a["ratio"] else ""
        lines.append(f"| {a['setting']} | {a['value']} | {a['default']} | {a['verdict']}{ratio} |")
    lines += [
        "",
        "A setting whose step is slower with it back at the default is one that mattered.",
        "The runs, with their reports: [compare/](compare/report.md) (defaults, pgtune, pgopt)"
        + (" and [ablation/](ablation/report.md)" if doc["ablation"] else "")
        + "; the configuration: [tune.conf](tune.conf).",
        "",
    ]
    return "\n".join(lines)


def summary_lines(doc: dict[str, Any]) -> list[str]:
    def ratio(v: dict[str, Any]) -> str:
        return str(v["text"])

    lines = [
        f"pgtune against the defaults: {ratio(doc['pgtune_vs_defaults'])}",
        f"pgopt against the defaults: {ratio(doc['pgopt_vs_defaults'])}",
        f"{doc['why']}; {doc['memory']}",
    ]
    if doc["ablation"]:
        lines.append(
            f"each of {doc['ablated_from']}'s settings back to its default (slower: it mattered):"
        )
    for a in doc["ablation"]:
        lines.append(f"  {a['setting']} {a['value']} -> {a['default']}: {ratio(a)}")
    return lines
