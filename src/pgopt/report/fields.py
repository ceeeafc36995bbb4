"""The optional and evolving parts of result.json, read in one place.

`why`, `waits`, `warnings`, `phases`, `facts` and the article's figures appear
only for some labs or once the observability work writes them; every report
reads them through these functions, so all render them alike and skip them
cleanly when they are absent or empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fmt import format_bytes, format_rate, format_rounds, format_seconds


@dataclass(frozen=True)
class Phase:
    name: str
    seconds: float
    ci95: tuple[float, float] | None
    why: str = ""  # its waits and WAL against the same phase in the step it derives from


@dataclass(frozen=True)
class PhaseRow:
    """One step's line of the phase table: each phase's median seconds and its
    verdict against the same phase in the step this one derives from."""

    step: str
    cells: list[tuple[float, str] | None]
    total: float
    article: list[float | None] | None = None  # the article's seconds, when it gave them
    article_total: float | None = None


PHASE_MARK = {"faster": "▼", "slower": "▲"}


def phase_cell(cell: tuple[float, str] | None) -> str:
    """'81.2 ▲': seconds, marked when the phase got slower (▲) or faster (▼)."""
    if cell is None:
        return "—"
    seconds, verdict = cell
    mark = PHASE_MARK.get(verdict)
    return f"{format_rate(seconds)} {mark}" if mark else format_rate(seconds)


def _phase_names(result: dict[str, Any]) -> list[str]:
    """The timed phases across steps, in first-seen order."""
    names: list[str] = []
    for step in result["steps"]:
        names += [p["name"] for p in step.get("phases") or [] if p["name"] not in names]
    return names


def phase_table(result: dict[str, Any]) -> tuple[list[str], list[PhaseRow]]:
    """The timed phases across steps (names in first-seen order), or ([], []) when
    the lab is not timed by phase."""
    names = _phase_names(result)
    rows = []
    for step in result["steps"]:
        by_name = {p["name"]: p for p in step.get("phases") or []}
        if not by_name:
            continue
        cells: list[tuple[float, str] | None] = [
            (float(by_name[n]["seconds"]), str(by_name[n].get("verdict_vs_previous", "n/a")))
            if n in by_name
            else None
            for n in names
        ]
        reported = step.get("reported") or {}
        theirs = reported.get("phases") or {}
        rows.append(
            PhaseRow(
                step["name"],
                cells,
                float(step["metric"]["median"]),
                [theirs.get(n) for n in names] if theirs else None,
                float(reported["value"]) if theirs else None,
            )
        )
    return (names, rows) if rows else ([], [])


PHASE_LEGEND = (
    "Median seconds per phase; ▲ slower, ▼ faster than the same phase in the step it "
    "derives from (by the run's verdict rule, phase by phase); under a step, "
    "the article's own seconds for it, on its hardware."
)


@dataclass(frozen=True)
class PhaseWaitsRow:
    """One step's line of the table of where each phase spent its time: per phase, short
    lines of text (its top waits, then its WAL), None where the step has no such phase."""

    step: str
    cells: list[list[str] | None]


PHASE_TOP_WAITS = 2
PHASE_WAITS_LEGEND = (
    "Per phase, the wait events sampled most often in the lab's sessions (CPU: running, "
    "no wait event) and the WAL the phase wrote (median over the runs)."
)


def phase_wait_lines(phase: dict[str, Any]) -> list[str]:
    """['CPU 84%', 'LWLock:WALWrite 7%', 'WAL 1.56 GiB'] for one observed phase."""
    waits = sorted(phase.get("waits", {}).items(), key=lambda kv: -float(kv[1]))
    lines = [f"{name} {float(share):.0%}" for name, share in waits[:PHASE_TOP_WAITS]]
    return [*(lines or ["no samples"]), f"WAL {format_bytes(float(phase['wal_bytes']))}"]


def phase_waits_table(result: dict[str, Any]) -> tuple[list[str], list[PhaseWaitsRow]]:
    """Where each phase spent its time, per step, or ([], []) when no phase was observed
    (a lab not timed by phase, or a result from before phases were observed)."""
    names = _phase_names(result)
    rows = []
    for step in result["steps"]:
        observed = {p["name"]: p for p in step.get("phases") or [] if "wal_bytes" in p}
        if observed:
            cells = [phase_wait_lines(observed[n]) if n in observed else None for n in names]
            rows.append(PhaseWaitsRow(step["name"], cells))
    return (names, rows) if rows else ([], [])


def article_cells(row: PhaseRow) -> list[str]:
    """The article's seconds for each phase and in total, '—' where it gave none."""
    values = [*(row.article or []), row.article_total]
    return [f"{v:g}" if v is not None else "—" for v in values]


@dataclass(frozen=True)
class ArticleRow:
    """One step's figure from the article beside ours."""

    step: str
    value: float
    unit: str
    note: str
    article_ratio: float | None
    our_ratio: dict[str, Any] | None


def why_lines(step: dict[str, Any]) -> list[str]:
    """The bottleneck explanation: a sentence, a list of them, or named parts."""
    why = step.get("why")
    if not why:
        return []
    if isinstance(why, str):
        return [why]
    if isinstance(why, list):
        return [str(item) for item in why if item]
    if isinstance(why, dict):
        return [f"{key}: {value}" for key, value in why.items() if value not in (None, "")]
    return [str(why)]


def wait_shares(step: dict[str, Any]) -> list[tuple[str, float]]:
    """Wait events and their share of the sampled time, largest first."""
    waits = step.get("waits")
    if not isinstance(waits, dict):
        return []
    shares = [
        (str(event), float(share))
        for event, share in waits.items()
        if isinstance(share, int | float) and not isinstance(share, bool)
    ]
    return sorted(shares, key=lambda item: -item[1])


def warnings(step: dict[str, Any]) -> list[str]:
    return [str(w) for w in step.get("warnings") or []]


def phases(step: dict[str, Any]) -> list[Phase]:
    out = []
    for phase in step.get("phases") or []:
        ci = phase.get("ci95")
        out.append(
            Phase(
                name=str(phase["name"]),
                seconds=float(phase["seconds"]),
                ci95=(float(ci[0]), float(ci[1])) if ci else None,
                why=str(phase.get("why") or ""),
            )
        )
    return out


def facts(step: dict[str, Any]) -> list[tuple[str, str]]:
    units = step.get("fact_units") or {}
    return [
        (str(k), f"{v} {units[k]}" if k in units else str(v))
        for k, v in (step.get("facts") or {}).items()
    ]


def latency(step: dict[str, Any]) -> dict[str, float | None] | None:
    """Latency in ms (avg, p50, p95, p99) when at least one figure is known."""
    lat = step.get("latency_ms")
    if not lat or all(v is None for v in lat.values()):
        return None
    return {key: lat.get(key) for key in ("avg", "p50", "p95", "p99")}


def article_rows(result: dict[str, Any]) -> list[ArticleRow]:
    rows = []
    for step in result["steps"]:
        reported = step.get("reported")
        if not reported:
            continue
        rows.append(
            ArticleRow(
                step=step["name"],
                value=float(reported["value"]),
                unit=str(reported.get("unit") or ""),
                note=str(reported.get("note") or ""),
                article_ratio=reported.get("ratio_vs_baseline"),
                our_ratio=step.get("ratio_vs_baseline"),
            )
        )
    return rows


def sweep_lines(result: dict[str, Any]) -> list[str]:
    """Each client sweep in one line: the metric by clients, the best and the knee."""
    unit = result["metric"]["unit"]
    lines = []
    for sweep in result.get("sweeps") or []:
        points = ", ".join(f"{p['clients']}: {format_rate(p['median'])}" for p in sweep["points"])
        lines.append(
            f"{sweep['name']} ({unit} by clients) {points}; best at {sweep['best_clients']} "
            f"clients, knee at {sweep['knee_clients']}"
        )
    return lines


def skipped_lines(result: dict[str, Any]) -> list[str]:
    """Steps the run left out, and why."""
    return [f"{s['name']}: {s['reason']}" for s in result.get("skipped") or []]


def headline(result: dict[str, Any]) -> dict[str, Any] | None:
    """The step that gained most against the baseline (the run's one-line answer)."""
    steps = [s for s in result.get("steps", [])[1:] if s.get("ratio_vs_baseline")]
    if not steps:
        return None
    sign = 1 if result["metric"]["higher_is_better"] else -1
    best: dict[str, Any] = max(steps, key=lambda s: sign * s["ratio_vs_baseline"]["median"])
    return best


def step_label(step: dict[str, Any]) -> str:
    """'async_commit: synchronous_commit = off', or the name alone."""
    title = step.get("title") or ""
    return f"{step['name']}: {title}" if title and title != step["name"] else step["name"]


def machine_parts(machine: dict[str, Any]) -> list[str]:
    """'2 CPUs', '23.5 GiB RAM', the platform and Python, as far as they are known."""
    parts = []
    if machine.get("cpus"):
        parts.append(f"{machine['cpus']} CPUs")
    if machine.get("memory_bytes"):
        parts.append(f"{format_bytes(float(machine['memory_bytes']))} RAM")
    if machine.get("platform"):
        parts.append(str(machine["platform"]))
    if machine.get("python"):
        parts.append(f"Python {machine['python']}")
    return parts


def run_facts(result: dict[str, Any]) -> list[str]:
    """When, how long, on what: the line under a report's title (unescaped; the
    article's seed file last, for the renderer to set as code)."""
    target = result.get("target", {})
    machine = result.get("machine", {})
    out = [
        f"started {result['started_at']}",
        f"took {format_seconds(float(result.get('duration_s') or 0))}",
        f"{target.get('kind', '?')} PostgreSQL {target.get('server_version', '?')}",
    ]
    if machine.get("cpus"):
        out.append(f"{machine['cpus']} CPUs")
    return out


def summary_caption(result: dict[str, Any]) -> str:
    """The legend under every summary table: what the figures are, how verdicts were drawn."""
    return (
        "Median of the runs ±run-to-run CV; × baseline: geometric-mean ratio with its 95% "
        "interval; verdict vs the step it derives from. " + decision_note(result)
    )


def decision_note(result: dict[str, Any]) -> str:
    """How this run decided, in a sentence ('' for results written before the rule)."""
    rule = result.get("verdicts")
    if not rule:
        return "Verdicts: a change is called only when its 95% interval excludes 1."
    if rule.get("sequential"):
        rounds = "until decided, looking after rounds " + ", ".join(map(str, rule["looks"]))
        level = f"{rule['alpha']:.1%} at each look"
    else:
        rounds = f"{result['params'].get('reps')} rounds"
        level = f"{rule['alpha']:.0%}"
    return (
        f"Rounds ran every step once in a random order ({rounds}). faster/slower: "
        f"significant at {level} after Benjamini-Hochberg across {rule['comparisons']} "
        f"comparisons, from {rule['min_rounds']} rounds; no-change: the 90% interval "
        f"within ±{rule['margin']:.0%}; inconclusive: neither, with the change the run "
        "could have detected."
    )


def comparison_evidence(ratio: dict[str, Any] | None) -> str:
    """'6 rounds, paired, run-to-run CV 2.1%, could detect ≥3.4%' ('' when not recorded)."""
    return format_rounds(ratio)


def rerun_lines(result: dict[str, Any]) -> list[str]:
    """Rounds run again because a run in them looked disturbed."""
    return [
        f"segment {r['segment']}, round {r['round']} run again: {r['reason']}"
        for r in result.get("reruns") or []
    ]


def round_lines(result: dict[str, Any]) -> list[str]:
    """How many rounds each segment ran, and why it stopped there."""
    plan = result.get("plan") or {}
    segments = plan.get("segments") or []
    lines = []
    for i, segment in enumerate(segments, 1):
        ran = f"{segment['rounds']} of {segment['planned_rounds']} ({segment['stopped']})"
        steps = ", ".join(segment["steps"])
        lines.append(f"segment {i} ({steps}): {ran}" if len(segments) > 1 else ran)
    return lines


def compared_with_other_than_baseline(step: dict[str, Any]) -> bool:
    """The step's verdict compares it with a step other than the baseline (the same
    comparison twice is shown once)."""
    previous = step.get("ratio_vs_previous")
    return bool(previous) and previous != step.get("ratio_vs_baseline")
