"""The parts of a result every report shows alike: phase tables, the article's
figures, sweeps, rounds, the line under the title and the summary's legend.

Optional parts (waits, phases, facts, the article's figures) are None or empty
in results that lack them, older ones included; these functions skip them
cleanly, so all reports render them alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis.guards import CLIENT_CPU_SATURATED
from ..model.result import LabResult, Ratio, StepResult
from ..model.result import Phase as PhaseResult
from ..words import plural
from .fmt import format_bytes, format_rate, format_seconds


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


def _phase_names(result: LabResult) -> list[str]:
    """The timed phases across steps, in first-seen order."""
    names: list[str] = []
    for step in result.steps:
        names += [p.name for p in step.phases or () if p.name not in names]
    return names


def phase_table(result: LabResult) -> tuple[list[str], list[PhaseRow]]:
    """The timed phases across steps (names in first-seen order), or ([], []) when
    the lab is not timed by phase."""
    names = _phase_names(result)
    rows = []
    for step in result.steps:
        by_name = {p.name: p for p in step.phases or ()}
        if not by_name:
            continue
        cells: list[tuple[float, str] | None] = [
            (by_name[n].seconds, str(by_name[n].verdict_vs_previous or "n/a"))
            if n in by_name
            else None
            for n in names
        ]
        theirs = step.reported.phases if step.reported and step.reported.phases else None
        rows.append(
            PhaseRow(
                step.name,
                cells,
                step.metric.median,
                [theirs.get(n) for n in names] if theirs else None,
                step.reported.value if theirs and step.reported else None,
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


def phase_wait_lines(phase: PhaseResult) -> list[str]:
    """['CPU 84%', 'LWLock:WALWrite 7%', 'WAL 1.56 GiB'] for one observed phase."""
    waits = sorted((phase.waits or {}).items(), key=lambda kv: -kv[1])
    lines = [f"{name} {share:.0%}" for name, share in waits[:PHASE_TOP_WAITS]]
    return [*(lines or ["no samples"]), f"WAL {format_bytes(phase.wal_bytes or 0.0)}"]


def phase_waits_table(result: LabResult) -> tuple[list[str], list[PhaseWaitsRow]]:
    """Where each phase spent its time, per step, or ([], []) when no phase was observed
    (a lab not timed by phase, or a result from before phases were observed)."""
    names = _phase_names(result)
    rows = []
    for step in result.steps:
        observed = {p.name: p for p in step.phases or () if p.wal_bytes is not None}
        if observed:
            cells = [phase_wait_lines(observed[n]) if n in observed else None for n in names]
            rows.append(PhaseWaitsRow(step.name, cells))
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
    our_ratio: Ratio | None


def cpu_line(step: StepResult, cpus: int | None) -> str | None:
    """Where the CPU went while pgbench ran: 'pgbench 0.62 cores of its 2 threads
    (31%) · server 1.21 cores · together 92% of the 2 CPUs'."""
    cpu = step.cpu
    if cpu is None:
        return None
    parts = [
        f"pgbench {cpu.client_cores:.2f} cores of its {plural(cpu.client_threads, 'thread')} "
        f"({cpu.client_busy:.0%})"
    ]
    if cpu.server_cores is not None:
        parts.append(f"server {cpu.server_cores:.2f} cores")
        if cpus:
            busy = (cpu.client_cores + cpu.server_cores) / cpus
            parts.append(f"together {busy:.0%} of the {plural(cpus, 'CPU')}")
    return " · ".join(parts)


def client_limited(steps: tuple[StepResult, ...]) -> list[StepResult]:
    """The steps whose pgbench kept its threads busy (90% or more): their rate is the
    client's ceiling as much as the server's."""
    return [s for s in steps if s.cpu is not None and s.cpu.client_busy >= CLIENT_CPU_SATURATED]


def why_lines(step: StepResult) -> list[str]:
    """The bottleneck explanation, when the step was observed."""
    return [step.why] if step.why else []


def wait_shares(step: StepResult) -> list[tuple[str, float]]:
    """Wait events and their share of the sampled time, largest first."""
    return sorted((step.waits or {}).items(), key=lambda item: -item[1])


def facts(step: StepResult) -> list[tuple[str, str]]:
    units = step.fact_units or {}
    return [(k, f"{v} {units[k]}" if k in units else str(v)) for k, v in step.facts.items()]


def latency(step: StepResult) -> dict[str, float | None] | None:
    """Latency in ms (avg, p50, p95, p99) when at least one figure is known."""
    lat = step.latency_ms
    if lat is None:
        return None
    figures = {"avg": lat.avg, "p50": lat.p50, "p95": lat.p95, "p99": lat.p99}
    return None if all(v is None for v in figures.values()) else figures


def article_rows(result: LabResult) -> list[ArticleRow]:
    return [
        ArticleRow(
            step=step.name,
            value=step.reported.value,
            unit=step.reported.unit,
            note=step.reported.note,
            article_ratio=step.reported.ratio_vs_baseline,
            our_ratio=step.ratio_vs_baseline,
        )
        for step in result.steps
        if step.reported
    ]


def sweep_lines(result: LabResult) -> list[str]:
    """Each client sweep in one line: the metric by clients, the best and the knee."""
    lines = []
    for sweep in result.sweeps:
        points = ", ".join(f"{p.clients}: {format_rate(p.median)}" for p in sweep.points)
        lines.append(
            f"{sweep.name} ({result.metric.unit} by clients) {points}; best at "
            f"{sweep.best_clients} client{'' if sweep.best_clients == 1 else 's'}, knee at "
            f"{sweep.knee_clients}"
        )
    return lines


def ceiling_lines(result: LabResult) -> list[str]:
    """How close the best step came to the ceiling the lab measures, in one line."""
    c = result.ceiling
    if c is None:
        return []
    unit = result.metric.unit
    return [
        f"{c.best} reaches {c.share:.0%} [95% {c.share_ci95[0]:.0%}–{c.share_ci95[1]:.0%}] "
        f"of the ceiling {c.step} measures ({format_rate(c.best_median)} against "
        f"{format_rate(c.median)} {unit}, {plural(c.rounds, 'round')})"
    ]


def skipped_lines(result: LabResult) -> list[str]:
    """Steps the run left out, and why."""
    return [f"{s.name}: {s.reason}" for s in result.skipped]


def headline(result: LabResult) -> StepResult | None:
    """The run's one-line answer: the step with the largest gain against its baseline
    among those whose verdict says it is faster; with none, the largest estimate (shown
    with its verdict, which then says it is not a finding)."""
    steps = [s for s in result.steps if s.ratio_vs_previous is not None]
    if not steps:
        return None
    sign = 1 if result.metric.higher_is_better else -1
    faster = [s for s in steps if str(s.verdict_vs_baseline) == "faster"]
    return max(faster or steps, key=lambda s: sign * s.ratio_vs_baseline.median)


def fact_text(name: str, value: Any) -> str:
    """'stale reads 90.2%' for a fact named 'stale reads, %'; 'name: value' otherwise."""
    if name.endswith(", %"):
        return f"{name.removesuffix(', %')} {value}%"
    return f"{name}: {value}"


def headline_lines(result: LabResult) -> list[str]:
    """The facts a step's summary row stands beside: 'read_your_writes: stale reads 79%'."""
    lines = []
    for step in result.steps:
        shown = [
            fact_text(name, step.facts[name]) for name in step.headline or () if name in step.facts
        ]
        if shown:
            lines.append(f"{step.name}: {'; '.join(shown)}")
    return lines


def unit_header(result: LabResult) -> str | None:
    """The one unit every step's figure is in (a column header, a plot's axis), or None
    when steps measure in different units (each figure then says its own)."""
    units = {step.metric.unit or result.metric.unit for step in result.steps}
    return units.pop() if len(units) == 1 else None


def step_label(step: StepResult) -> str:
    """'async_commit: synchronous_commit = off', or the name alone."""
    title = step.title
    return f"{step.name}: {title}" if title and title != step.name else step.name


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


def server_versions(target: dict[str, Any]) -> str:
    """The server's version, or an A/B across servers' two: "15.14 (a), 18.6 (b)"."""
    servers = target.get("servers")
    if servers:
        return ", ".join(f"{s.get('server_version', '?')} ({n})" for n, s in servers.items())
    return str(target.get("server_version", "?"))


def run_facts(result: LabResult) -> list[str]:
    """When, how long, on what: the line under a report's title (unescaped)."""
    out = [
        f"started {result.started_at}",
        f"took {format_seconds(result.duration_s)}",
        f"{result.target.get('kind', '?')} PostgreSQL {server_versions(result.target)}",
    ]
    if result.machine.get("cpus"):
        out.append(f"{result.machine['cpus']} CPUs")
    return out


def summary_caption(result: LabResult) -> str:
    """The legend under every summary table: what the figures are, how verdicts were drawn."""
    return (
        "Median of the runs ±run-to-run CV; × baseline: geometric-mean ratio to the "
        "baseline (the first step, or the one named) with its 95% interval; verdict: "
        "against the step it derives from (named), beside the ratio of that pair. "
        + decision_note(result)
    )


def decision_note(result: LabResult) -> str:
    """How this run decided, in a sentence."""
    rule = result.verdicts
    if rule is None:  # a result written before the rule was recorded
        return "Verdicts: a change is called only when its 95% interval excludes 1."
    if rule.sequential:
        rounds = "until decided, looking after rounds " + ", ".join(map(str, rule.looks))
        level = f"{rule.alpha:.1%} at each look"
    else:
        rounds = plural(int(result.params.get("reps") or 0), "round")
        segments = result.plan.segments if result.plan else ()
        if any(s.planned_rounds and s.rounds < s.planned_rounds for s in segments):
            ran = sorted({s.rounds for s in segments})  # stopped before the end
            span = str(ran[0]) if len(ran) == 1 else f"{ran[0]} to {ran[-1]}"
            rounds += f" planned, {span} ran"
        level = f"{rule.alpha:.0%}"
    return (
        f"Rounds ran every step once in a random order ({rounds}). faster/slower: "
        f"significant at {level} after Benjamini-Hochberg across "
        f"{plural(rule.comparisons, 'comparison')}, from "
        f"{plural(rule.min_rounds or 3, 'round')}; no-change: the 90% interval "
        f"within ±{rule.margin:.0%}; inconclusive: neither, with the change the run "
        "could have detected."
    )


def rerun_lines(result: LabResult) -> list[str]:
    """Rounds run again because a run in them looked disturbed."""
    return [f"segment {r.segment}, round {r.round} run again: {r.reason}" for r in result.reruns]


def round_lines(result: LabResult) -> list[str]:
    """How many rounds each segment ran, and why it stopped there."""
    segments = result.plan.segments if result.plan else ()
    lines = []
    for i, segment in enumerate(segments, 1):
        ran = f"{segment.rounds} of {segment.planned_rounds} ({segment.stopped})"
        if segment.sliced_rounds:
            ran += f"; {_sliced(segment.sliced_rounds, segment.rounds)}, {segment.slice_s}s each"
        elif segment.why_whole:
            ran += f"; whole runs ({segment.why_whole})"
        steps = ", ".join(segment.steps)
        lines.append(f"segment {i} ({steps}): {ran}" if len(segments) > 1 else ran)
    return lines


def _sliced(sliced: tuple[int, ...], rounds: int) -> str:
    """'runs in slices taking turns' or 'rounds 2-10 in slices taking turns'."""
    if len(sliced) == rounds:
        return "runs in slices taking turns"
    if list(sliced) == list(range(sliced[0], sliced[-1] + 1)):
        span = str(sliced[0]) if len(sliced) == 1 else f"{sliced[0]}-{sliced[-1]}"
        return f"round{'s' if len(sliced) > 1 else ''} {span} in slices taking turns"
    return f"rounds {', '.join(map(str, sliced))} in slices taking turns"


def compared_with_other_than_baseline(step: StepResult) -> bool:
    """The step's verdict compares it with a step other than the baseline (the same
    comparison twice is shown once)."""
    previous = step.ratio_vs_previous
    return previous is not None and previous != step.ratio_vs_baseline


def describe_across(facts: dict[str, Any]) -> str:
    """One line for the terminal and the report."""
    v = facts["versions"]
    changed = facts["defaults_changed"]
    listed = ", ".join(f"{name} {d['a']} → {d['b']}" for name, d in list(changed.items())[:6]) + (
        " …" if len(changed) > 6 else ""
    )
    parts = [
        f"{len(facts['only_b'])} settings only in {v['b']}" if facts["only_b"] else "",
        f"{len(facts['only_a'])} only in {v['a']}" if facts["only_a"] else "",
        f"{len(changed)} defaults changed ({listed})" if changed else "no default changed",
    ]
    return f"between PostgreSQL {v['a']} and {v['b']}: " + "; ".join(p for p in parts if p)
