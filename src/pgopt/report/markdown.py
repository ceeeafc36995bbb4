"""report.md: a run as Markdown that reads well pasted into a GitHub issue.

A pure function of the result.json document. Text that comes from a lab file
or the database is escaped, so a step title cannot break a table or inject HTML.
"""

from __future__ import annotations

import re
from typing import Any

from . import fields
from .fmt import (
    format_article,
    format_changes,
    format_checks,
    format_interval,
    format_metric,
    format_ms,
    format_rate,
    format_ratio,
    format_value,
    format_verdict,
)

_MD_SPECIAL = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "*": "\\*", "`": "\\`", "\\": "\\\\"}
)


def text(value: object) -> str:
    """Plain text safe anywhere in Markdown, table cells included: one line, no markup."""
    return " ".join(str(value).split()).translate(_MD_SPECIAL)


def code(value: object, *, in_table: bool = False) -> str:
    """An inline code span that holds any text, backticks included."""
    s = " ".join(str(value).split())
    if in_table:
        s = s.replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _table(header: list[str], rows: list[list[str]], align: str = "") -> list[str]:
    """A GFM table; `align` has one letter per column, 'r' for right-aligned."""
    marks = ["---:" if a == "r" else "---" for a in align.ljust(len(header), "l")]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def render_markdown(result: dict[str, Any]) -> str:
    lines = _header(result)
    lines += ["", "## Summary", "", *_summary(result)]
    lines += _phase_table(result)
    lines += _phase_waits_table(result)
    lines += _listed("Client sweeps", fields.sweep_lines(result))
    lines += _listed("Skipped steps", fields.skipped_lines(result))
    for index, step in enumerate(result["steps"], 1):
        lines += ["", *_step(index, step)]
    lines += _article(result)
    lines += ["", "## Environment", "", *_environment(result)]
    lines += ["", "## Reproduce", "", *_fenced(result.get("command") or "", "sh")]
    lines += ["", f"<sub>Rendered by pgopt from result.json ({text(result['schema'])}).</sub>"]
    return "\n".join(lines) + "\n"


def _header(result: dict[str, Any]) -> list[str]:
    lines = [f"# {text(result['lab'])}: {text(result['title'])}", ""]
    if result.get("description"):
        lines += [text(result["description"]), ""]
    facts = [text(fact) for fact in fields.run_facts(result)]
    if result.get("seed"):
        facts.append(f"article {code(result['seed'])}")
    lines.append(" · ".join(facts))
    if not result.get("complete", True):
        error = result.get("error") or "stopped early"
        lines += ["", f"> **Incomplete run** ({text(error)}): only the runs that finished."]
    if not result.get("passed", True):
        lines += ["", "> **A check failed**: see the checks column and the steps below."]
    return lines


def _summary(result: dict[str, Any]) -> list[str]:
    unit = text(result["metric"]["unit"])
    header = ["step", "what changed", unit, "× baseline", "verdict", "article", "checks"]
    rows = []
    for index, step in enumerate(result["steps"]):
        checks, ok = format_checks(step)
        rows.append(
            [
                f"**{text(step['name'])}**",
                code(format_changes(step), in_table=True),
                format_metric(step["metric"]),
                format_ratio(step["ratio_vs_baseline"]),
                text(format_verdict(result, index)),
                format_article(step),
                text(checks) if ok else f"❌ {text(checks)}",
            ]
        )
    return [
        *_table(header, rows, "llrrlrl"),
        "",
        "Median ± 95% interval half-width; × baseline with its 95% interval; "
        "verdict vs the step it derives from (called only when the interval excludes 1).",
    ]


def _phase_table(result: dict[str, Any]) -> list[str]:
    names, rows = fields.phase_table(result)
    if not rows:
        return []
    table = []
    for r in rows:
        table.append(
            [f"**{text(r.step)}**", *(fields.phase_cell(c) for c in r.cells), format_rate(r.total)]
        )
        if r.article is not None:
            table.append(["*article*", *fields.article_cells(r)])
    header = ["step", *(text(n) for n in names), "total"]
    return [
        "",
        "### Seconds per phase",
        "",
        *_table(header, table, "l" + "r" * (len(names) + 1)),
        "",
        fields.PHASE_LEGEND,
    ]


def _phase_waits_table(result: dict[str, Any]) -> list[str]:
    names, rows = fields.phase_waits_table(result)
    if not rows:
        return []
    table = [
        [f"**{text(r.step)}**", *(" · ".join(map(text, c)) if c else "—" for c in r.cells)]
        for r in rows
    ]
    return [
        "",
        "### Where each phase spent its time",
        "",
        *_table(["step", *(text(n) for n in names)], table),
        "",
        fields.PHASE_WAITS_LEGEND,
    ]


def _listed(title: str, items: list[str]) -> list[str]:
    return ["", f"**{title}:**", "", *(f"- {text(item)}" for item in items)] if items else []


def _step(index: int, step: dict[str, Any]) -> list[str]:
    metric = step["metric"]
    unit = text(metric["unit"])
    lines = [f"### {index}. {text(fields.step_label(step))}", ""]
    if step.get("note"):
        lines += [text(step["note"]), ""]
    changed = code(format_changes(step))
    if step.get("clients"):
        changed += f" · {step['clients']} clients"
    samples = ", ".join(format_rate(v) for v in metric["samples"])
    low, high = metric["ci95"]
    lines += [
        f"- **What changed:** {changed}",
        f"- **{unit}:** {format_rate(metric['median'])} median, 95% interval "
        f"{format_interval(low, high)} ({len(metric['samples'])} runs: {samples})",
        f"- **× baseline:** {format_ratio(step['ratio_vs_baseline'])}",
    ]
    if step.get("ratio_vs_previous"):
        lines.append(
            f"- **× {text(step.get('compared_with') or 'previous')}:** "
            f"{format_ratio(step['ratio_vs_previous'])}, "
            f"**{text(step['verdict_vs_previous'])}**"
        )
    lat = fields.latency(step)
    if lat:
        parts = " · ".join(f"{key} {format_ms(value)}" for key, value in lat.items())
        lines.append(f"- **Latency (ms):** {parts}")
    for why in fields.why_lines(step):
        lines.append(f"- **Bottleneck:** {text(why)}")
    waits = fields.wait_shares(step)
    if waits:
        lines.append(
            "- **Waits:** " + " · ".join(f"{text(event)} {share:.0%}" for event, share in waits)
        )
    checks = step.get("checks") or []
    if checks:
        marks = " · ".join(f"{'✅' if c['passed'] else '❌'} {text(c['name'])}" for c in checks)
        lines.append(f"- **Checks:** {marks}")
        lines += [
            f"  - {text(c['name'])}: {text(c['detail'])}"
            for c in checks
            if not c["passed"] and c.get("detail")
        ]
    for warning in fields.warnings(step):
        lines.append(f"- ⚠️ **Warning:** {text(warning)}")
    phases = fields.phases(step)
    if phases:
        rows = [
            [
                text(p.name),
                f"{p.seconds:.3f}",
                f"{p.ci95[0]:.3f}–{p.ci95[1]:.3f}" if p.ci95 else "—",
                text(p.why) or "—",
            ]
            for p in phases
        ]
        header = ["phase", "seconds (median)", "95% interval", "waits and WAL"]
        lines += ["", *_table(header, rows, "lrrl")]
    step_facts = fields.facts(step)
    if step_facts:
        rows = [[text(k), code(v, in_table=True)] for k, v in step_facts]
        lines += ["", *_table(["fact", "value"], rows)]
    return lines


def _article(result: dict[str, Any]) -> list[str]:
    rows = fields.article_rows(result)
    if not rows:
        return []
    table = [
        [
            text(row.step),
            f"{format_rate(row.value)} {text(row.unit)}",
            f"×{row.article_ratio:.2f}" if row.article_ratio is not None else "—",
            format_ratio(row.our_ratio),
            text(row.note) or "—",
        ]
        for row in rows
    ]
    lines = ["", "## The article's figures beside ours", ""]
    if result.get("seed"):
        lines += [f"Article: {code(result['seed'])}", ""]
    lines += _table(
        ["step", "article", "article × its baseline", "ours × baseline", "article's setup"],
        table,
        "lrrrl",
    )
    lines += [
        "",
        "Compare ratios, not absolute figures: the article ran on other hardware.",
    ]
    return lines


def _environment(result: dict[str, Any]) -> list[str]:
    target = dict(result.get("target", {}))
    settings = target.pop("non_default_settings", None) or {}
    machine = result.get("machine", {})
    params = result.get("params", {})
    lines = [
        f"- **Server:** {text(target.get('kind', '?'))} PostgreSQL "
        f"{text(target.get('server_version', '?'))}",
    ]
    described = [text(part) for part in fields.machine_parts(machine)]
    if described:
        lines.append(f"- **Machine:** {', '.join(described)}")
    if params:
        lines.append(
            "- **Parameters:** "
            + ", ".join(
                f"{text(k)} {code(format_value(v))}" for k, v in params.items() if v is not None
            )
        )
    if target:
        rows = [[text(k), code(format_value(v), in_table=True)] for k, v in target.items()]
        lines += ["", "<details><summary>Target</summary>", "", *_table(["field", "value"], rows)]
        lines += ["", "</details>"]
    if settings:
        rows = [[code(k, in_table=True), code(v, in_table=True)] for k, v in settings.items()]
        lines += [
            "",
            f"<details><summary>Non-default server settings ({len(settings)})</summary>",
            "",
            *_table(["setting", "value"], rows),
            "",
            "</details>",
        ]
    return lines


def _fenced(body: str, lang: str) -> list[str]:
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", body, fence]
