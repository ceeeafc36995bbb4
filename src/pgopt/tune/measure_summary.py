"""What `tune --measure` found, as tune.json (schema "pgopt.tune-run/1": the inputs,
both profiles, the verdicts, which settings mattered), its report page and its lines
on the terminal (pure)."""

from __future__ import annotations

from typing import Any

from ..model.result import LabResult
from .choice import Choice, verdict_text
from .facts import Profiled

RUN_SCHEMA = "pgopt.tune-run/1"


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
