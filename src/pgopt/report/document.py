"""The report as one document, built once from a result (pure).

A document is sections of blocks: tables of cells, labelled items, paragraphs,
code. Text is kept raw, in spans with a style (strong, code, or a tone such as
good or bad); each renderer (terminal, Markdown, HTML) escapes and styles it its
own way and adds nothing of its own, so the three cannot drift apart. Captions
and legends are data here too.
"""

from __future__ import annotations

from ..model.result import LabResult, Ratio, StepResult
from ..words import plural
from . import fields, plan_blocks, replay, statement_blocks
from .banners import banners
from .blocks import (
    VERDICT_STYLE,
    Block,
    Cell,
    Code,
    Document,
    Inline,
    Items,
    Paragraph,
    Plots,
    Section,
    Span,
    Style,
    Table,
    plain,
)
from .fmt import (
    format_article,
    format_changes,
    format_checks,
    format_interval,
    format_metric,
    format_ms,
    format_rate,
    format_ratio,
    format_rounds,
    format_value,
    format_verdict_word,
    format_vs_baseline,
    is_a_baseline,
)
from .phase_tables import phase_tables
from .time_lines import time_lines


def build_document(result: LabResult) -> Document:
    return Document(
        title=f"{result.lab}: {result.title}",
        lede=result.description,
        facts=_facts(result),
        banners=banners(result),
        summary=_summary(result),
        sections=(
            *([replay.section(result.fidelity)] if result.fidelity else []),
            Section("Plots", (Plots(),)),
            Section("Steps", ()),
            *(_step(i, step, result.machine.get("cpus")) for i, step in enumerate(result.steps)),
            *statement_blocks.sections(result),
            *plan_blocks.sections(result),
            *_article(result),
            _environment(result),
            Section("Reproduce", (Code(result.command, "sh"),)),
        ),
        schema=result.schema,
    )


def _facts(result: LabResult) -> Inline:
    spans: list[Span] = []
    for i, fact in enumerate(fields.run_facts(result)):
        spans += [Span(" · ")] if i else []
        spans.append(Span(fact))
    if result.seed:
        spans += [Span(" · article "), Span(result.seed, Style.CODE)]
    return tuple(spans)


def verdict_spans(verdict: str, ratio: Ratio | None, *, detectable: bool = True) -> Inline:
    word = format_verdict_word(ratio, verdict, detectable=detectable)
    return (Span(word, VERDICT_STYLE.get(verdict, Style.PLAIN)),)


def judged(step: StepResult, replay: str | None = None) -> Inline:
    """A step's verdict with the ratio it judged and the step it compared with, always
    together: 'faster ×1.10 [1.02–1.18] vs async_commit'; '—' for a baseline. On a
    replay that is not faithful (`replay`: its verdict), it says so beside it."""
    ratio = step.ratio_vs_previous
    if ratio is None:
        return (Span("—"),)
    spans = (
        *verdict_spans(str(step.verdict_vs_previous), ratio),
        Span(f" {format_ratio(ratio)}"),
        Span(f" vs {step.compared_with or 'the step before'}", Style.MUTED),
    )
    if replay is not None and replay != "faithful":
        spans += (Span(f" (on a {replay} replay)", Style.WARN),)
    return spans


def _summary(result: LabResult) -> Section:
    rows = []
    article = any(step.reported for step in result.steps)  # a column only where it says something
    unit = fields.unit_header(result)
    for i, step in enumerate(result.steps):
        checks, ok = format_checks(step)
        figure = format_metric(step.metric)
        if unit is None:
            figure += f" {step.metric.unit or result.metric.unit}"
        rows.append(
            (
                Cell((Span(step.name, Style.STRONG),), swatch=i),
                Cell((Span(format_changes(step), Style.CODE),)),
                Cell(plain(figure)),
                Cell(plain(format_vs_baseline(result, step))),
                Cell(judged(step, result.fidelity.verdict if result.fidelity else None)),
                *([Cell(plain(format_article(step)))] if article else []),
                Cell(
                    (
                        Span(
                            checks,
                            Style.PLAIN if not step.checks else Style.GOOD if ok else Style.BAD,
                        ),
                    )
                ),
            )
        )
    table = Table(
        header=(
            "step",
            "what changed",
            unit or "median",
            "× baseline",
            "verdict",
            *(["article"] if article else []),
            "checks",
        ),
        rows=tuple(rows),
        numeric=frozenset({2, 3, 5} if article else {2, 3}),
        caption=fields.summary_caption(result),
    )
    blocks: list[Block] = [table, *phase_tables(result)]
    if result.fidelity is not None:
        blocks.insert(0, replay.table(result.fidelity, judged_only=True))
    notes = [
        # across versions, what moved comes first, right under the verdicts
        ("Statements", statement_blocks.summary_lines(result)),
        ("Facts", fields.headline_lines(result)),
        ("Ceiling", fields.ceiling_lines(result)),
        ("Client sweeps", fields.sweep_lines(result)),
        ("Skipped steps", fields.skipped_lines(result)),
        ("Rounds", [*fields.round_lines(result), *fields.rerun_lines(result)]),
        ("Time", time_lines(result)),
        ("Why", [f"{s.name}: {w}" for s in result.steps for w in fields.why_lines(s)]),
        ("Plans", plan_blocks.summary_lines(result)),
        ("Warnings", [f"{s.name}: {w}" for s in result.steps for w in s.warnings]),
    ]
    blocks += [
        Items(tuple(("", plain(line)) for line in lines), title) for title, lines in notes if lines
    ]
    return Section("Summary", tuple(blocks))


def _comparison(ratio: Ratio | None, verdict: str) -> Inline:
    """'×2.01 [1.98–2.04] faster (6 rounds, paired, run-to-run CV 1.2%, ...)'."""
    spans = [Span(format_ratio(ratio))]
    if verdict != "n/a":
        spans += [Span(" "), *verdict_spans(verdict, ratio, detectable=False)]
    evidence = format_rounds(ratio)
    if evidence:
        spans.append(Span(f" ({evidence})", Style.MUTED))
    return tuple(spans)


def _step(index: int, step: StepResult, cpus: int | None = None) -> Section:
    metric = step.metric
    samples = ", ".join(format_rate(v) for v in metric.samples)
    low, high = metric.ci95
    changed: list[Span] = [Span(format_changes(step), Style.CODE)]
    if step.clients:
        changed.append(Span(f" · {plural(step.clients, 'client')}"))
    items: list[tuple[str, Inline]] = [
        ("What changed", tuple(changed)),
        (
            metric.unit,
            (
                Span(format_rate(metric.median), Style.STRONG),
                Span(
                    f" median, 95% interval {format_interval(low, high)} "
                    f"({plural(len(metric.samples), 'run')}: {samples})"
                ),
            ),
        ),
    ]
    if not is_a_baseline(step):
        items.append(
            (
                f"× {step.baseline or 'baseline'}"
                + (" (baseline)" if step.baseline and step.baseline != "baseline" else ""),
                _comparison(step.ratio_vs_baseline, str(step.verdict_vs_baseline)),
            )
        )
    if fields.compared_with_other_than_baseline(step):
        items.append(
            (
                f"× {step.compared_with or 'the step before'}",
                _comparison(step.ratio_vs_previous, str(step.verdict_vs_previous)),
            )
        )
    lat = fields.latency(step)
    if lat:
        items.append(
            ("Latency (ms)", plain(" · ".join(f"{k} {format_ms(v)}" for k, v in lat.items())))
        )
    items += [("Bottleneck", (Span(why, Style.STRONG),)) for why in fields.why_lines(step)]
    cpu = fields.cpu_line(step, cpus)
    if cpu:
        items.append(("CPU", plain(cpu)))
    waits = fields.wait_shares(step)
    if waits:
        items.append(("Waits", plain(" · ".join(f"{ev} {share:.0%}" for ev, share in waits))))
    if step.checks:
        spans: list[Span] = []
        for i, c in enumerate(step.checks):
            spans += [Span(" · ")] if i else []
            detail = f": {c.detail}" if c.detail and not c.passed else ""
            mark = "✔" if c.passed else "✘"
            spans.append(Span(f"{mark} {c.name}{detail}", Style.PLAIN if c.passed else Style.BAD))
        items.append(("Checks", tuple(spans)))
    items += [("Warning", (Span(f"⚠ {w}", Style.WARN),)) for w in step.warnings]
    blocks: list[Block] = []
    if step.note:
        blocks.append(Paragraph(plain(step.note)))
    blocks.append(Items(tuple(items)))
    if step.phases:
        blocks.append(
            Table(
                header=("phase", "seconds (median)", "95% interval", "waits and WAL"),
                rows=tuple(
                    (
                        Cell(plain(p.name)),
                        Cell(plain(f"{p.seconds:.3f}")),
                        Cell(plain(f"{p.ci95[0]:.3f}–{p.ci95[1]:.3f}" if p.ci95 else "—")),
                        Cell(plain(p.why or "—")),
                    )
                    for p in step.phases
                ),
                numeric=frozenset({1, 2}),
            )
        )
    step_facts = fields.facts(step)
    if step_facts:
        blocks.append(
            Table(
                header=("fact", "value"),
                rows=tuple((Cell(plain(k)), Cell((Span(v, Style.CODE),))) for k, v in step_facts),
            )
        )
    return Section(
        f"{index + 1}. {fields.step_label(step)}",
        tuple(blocks),
        level=3,
        anchor=f"step-{step.name}",
        swatch=index,
    )


def _article(result: LabResult) -> list[Section]:
    rows = fields.article_rows(result)
    if not rows:
        return []
    blocks: list[Block] = []
    if result.seed:
        blocks.append(Paragraph((Span("Article: "), Span(result.seed, Style.CODE))))
    blocks.append(
        Table(
            header=(
                "step",
                "article",
                "article × its baseline",
                "ours × baseline",
                "article's setup",
            ),
            rows=tuple(
                (
                    Cell(plain(row.step)),
                    Cell(plain(f"{format_rate(row.value)} {row.unit}")),
                    Cell(
                        plain(f"×{row.article_ratio:.2f}" if row.article_ratio is not None else "—")
                    ),
                    Cell(plain(format_ratio(row.our_ratio))),
                    Cell(plain(row.note or "—")),
                )
                for row in rows
            ),
            numeric=frozenset({1, 2, 3}),
            caption="Compare ratios, not absolute figures: the article ran on other hardware.",
        )
    )
    return [Section("The article's figures beside ours", tuple(blocks))]


def _environment(result: LabResult) -> Section:
    target = dict(result.target)
    settings = target.pop("non_default_settings", None) or {}
    versions = fields.server_versions(target)
    target.pop("servers", None)
    across = target.pop("settings_across", None)
    params = result.params
    items: list[tuple[str, Inline]] = [
        ("Server", plain(f"{target.get('kind', '?')} PostgreSQL {versions}")),
        ("Machine", plain(", ".join(fields.machine_parts(result.machine)) or "—")),
    ]
    if across:
        items.append(("Settings", plain(fields.describe_across(across))))
    if params:
        spans: list[Span] = []
        shown = {k: v for k, v in params.items() if v is not None}
        if not shown.pop("scaled", True):
            shown.pop("scale", None)  # the data does not follow it (an A/B's copy)
        for i, (k, v) in enumerate(shown.items()):
            spans += [Span(", ")] if i else []
            spans += [Span(f"{k} "), Span(format_value(v), Style.CODE)]
        items.append(("Parameters", tuple(spans)))
    blocks: list[Block] = [Items(tuple(items))]
    if target:
        blocks.append(
            Table(
                header=("field", "value"),
                rows=tuple(
                    (Cell(plain(k)), Cell((Span(format_value(v), Style.CODE),)))
                    for k, v in target.items()
                ),
                title="Target",
                folded=True,
            )
        )
    if settings:
        blocks.append(
            Table(
                header=("setting", "value"),
                rows=tuple(
                    (Cell((Span(k, Style.CODE),)), Cell((Span(v, Style.CODE),)))
                    for k, v in settings.items()
                ),
                title=f"Non-default server settings ({len(settings)})",
                folded=True,
            )
        )
    return Section("Environment", tuple(blocks))
