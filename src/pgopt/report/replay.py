"""A replay's fidelity in the report (pure): the line every report opens with, the
table of the statements that weigh in the verdict (the terminal's), and the
section with every statement, the whole workload's figures and the thresholds."""

from __future__ import annotations

from ..analysis.amdahl import (
    RunFigures,
    application_bound,
    cpus_bind,
    round_pairs,
    shared_cpu_estimate,
    shared_cpu_interval,
)
from ..model.fidelity import Fidelity, StatementFidelity
from ..model.result import LabResult, StepResult
from .blocks import Block, Cell, Inline, Items, Section, Span, Style, Table, plain

VERDICT_STYLE = {"faithful": Style.GOOD, "partial": Style.WARN, "unfaithful": Style.BAD}


def banner(fidelity: Fidelity) -> tuple[Style, Inline]:
    """'Replay faithful: 97% of the source's time replayed ...' or, short of that,
    its first reasons."""
    style = VERDICT_STYLE.get(fidelity.verdict, Style.WARN)
    head = Span(f"Replay {fidelity.verdict}", Style.STRONG)
    if fidelity.verdict == "faithful":
        judged = [s for s in fidelity.statements if s.judged]
        text = (
            f": {fidelity.replayed_share:.0%} of the source's execution time replayed; "
            f"{len(judged)} statements within {fidelity.thresholds['rows_ratio']:g}x of their "
            f"rows and {fidelity.thresholds['time_ratio']:g}x of their time a call"
        )
    else:
        more = len(fidelity.reasons) - 3
        text = ": " + "; ".join(fidelity.reasons[:3]) + (f"; and {more} more" if more > 0 else "")
        text += ". A verdict on this replay may not hold for the source."
    return style, (head, Span(text))


# settings that act on how commits are made: their effect grows with commits a statement
COMMIT_SETTINGS = frozenset(
    {"synchronous_commit", "commit_delay", "commit_siblings", "fsync", "wal_sync_method",
     "wal_writer_delay", "wal_writer_flush_after", "full_page_writes"}
)  # fmt: skip


def commits_unknown(fidelity: Fidelity, result: LabResult) -> tuple[Style, Inline] | None:
    """A change that acts on commits, measured on a replay whose transaction shape is
    unknown: its ratio depends on what the replay had to assume."""
    if fidelity.source_statements_per_commit is not None:
        return None
    changed = sorted(
        {name for s in result.steps for name in (s.settings or {}) if name in COMMIT_SETTINGS}
    )
    if not changed:
        return None
    text = (
        f": {', '.join(changed)} acts on commits, and the source's statements a commit are "
        "unknown: the replay ran each statement as its own transaction, the most commits a "
        "statement can have, so this ratio is likely larger than the application's"
    )
    return Style.WARN, (Span("A verdict that depends on commits", Style.STRONG), Span(text))


def application(fidelity: Fidelity, result: LabResult) -> tuple[Style, Inline] | None:
    """What the database's ratio is worth to the application: where the source's
    sessions spend part of their busy time in the application's own work, a faster
    database speeds the application up by at most Amdahl's bound."""
    share = fidelity.database_share
    if share is None or not result.metric.higher_is_better:
        return None
    shared = _shared_cpus(fidelity, result)
    bounds = []
    for step in result.steps:
        ratio = step.ratio_vs_previous
        if ratio is None or ratio.median <= 0:
            continue
        low, high = (application_bound(r, share) for r in ratio.ci95)
        bound = application_bound(ratio.median, share)
        bounds.append(
            f"{step.name}'s ×{ratio.median:.2f} [{ratio.ci95[0]:.2f}–{ratio.ci95[1]:.2f}] is "
            f"at most ×{bound:.2f} [{low:.2f}–{high:.2f}] to it"
        )
    if not bounds:
        return None
    text = (
        f": the database is {share:.0%} of the source's busy session time (from "
        f"{fidelity.database_share_from}); the rest is the application's own work, which "
        "no database change speeds up, so " + "; ".join(bounds) + " (Amdahl's bound, "
        "as long as the application's own time stays as it was: where it shares the "
        "database's CPUs, that time may shrink too)."
    )
    return Style.PLAIN, (Span("The application", Style.STRONG), Span(text + shared))


def _shared_cpus(fidelity: Fidelity, result: LabResult) -> str:
    """Where the source runs on this machine: how busy its CPUs were over the watch,
    and what each step's ratio is about to an application whose own work is CPU on
    them (the CPU the database saves is its own), or whose clients only wait for it
    (up to the database's own ratio)."""
    busy, cpu_share = fidelity.host_busy, fidelity.database_cpu_share
    if busy is None or cpu_share is None:
        return ""
    seen = (
        f" The source runs on this machine, whose CPUs were {busy:.0%} busy during the "
        f"watch, the database {cpu_share:.0%} of that"
    )
    if not cpus_bind(busy):
        return (
            seen + ": idle more than half the time, so the CPU the database saves is not "
            "what holds an application on them back."
        )
    base = result.steps[0].server_cpu_us_per_tx if result.steps else None
    estimates = []
    for step in result.steps[1:]:
        ratio, cpu = step.ratio_vs_baseline, step.server_cpu_us_per_tx
        if cpu is None or base is None or base.median <= 0:
            continue
        about = shared_cpu_estimate(ratio.median, cpu_share, cpu.median / base.median)
        pairs = round_pairs(_figures(result.steps[0]), _figures(step))
        interval = shared_cpu_interval(pairs, cpu_share)
        spread = f" [{interval[0]:.2f}–{interval[1]:.2f}]" if interval else ""
        estimates.append(
            f"{step.name}'s ×{ratio.median:.2f} is about ×{about:.2f}{spread} to it (the "
            f"replay's server CPU a transaction {base.median:,.0f} → {cpu.median:,.0f} µs"
            + (f"; the interval from its {len(pairs)} rounds" if interval else "")
            + ")"
        )
    if not estimates:
        return seen + "."
    return (
        seen + ". An application whose own work is CPU on these cores gets the CPU the "
        "database saves: " + "; ".join(estimates) + ". One whose clients only wait for "
        "the CPU gets that time back, up to the database's own ratio."
    )


def _figures(step: StepResult) -> list[RunFigures]:
    """Each of the step's runs with its round, rate, server CPU and transactions known."""
    return [
        (r.round, r.tps, r.server_cpu_s, r.transactions)
        for r in step.runs
        if r.round is not None and r.tps and r.server_cpu_s and r.transactions
    ]


def _figure(source: float, replay: float | None, digits: str = ".3g") -> str:
    """'100 → 98.7'; '100 → —' where the replay did not run it."""
    return (
        f"{source:{digits}} → {replay:{digits}}" if replay is not None else f"{source:{digits}} → —"
    )


def _row(s: StatementFidelity) -> tuple[Cell, ...]:
    mark = Span("✔", Style.GOOD) if s.within else Span("✘ " + s.why, Style.BAD)
    return (
        Cell((Span(s.name, Style.STRONG),)),
        Cell(plain(f"{s.share:.1%}")),
        Cell(plain(_figure(s.source_rows, s.replay_rows))),
        Cell(plain(_figure(s.source_ms, s.replay_ms))),
        Cell(plain(_figure(s.source_blocks, s.replay_blocks))),
        Cell((mark,)),
        Cell((Span(" ".join(s.query.split())[:70], Style.CODE),)),
    )


HEADER = ("statement", "source time", "rows a call", "ms a call", "blocks a call", "", "query")


def table(fidelity: Fidelity, *, judged_only: bool) -> Table:
    rows = [s for s in fidelity.statements if s.judged or not judged_only]
    return Table(
        header=HEADER,
        rows=tuple(_row(s) for s in rows),
        numeric=frozenset({1, 2, 3, 4}),
        title="Fidelity: the replay (A's runs) against the source, per call",
        caption=(
            "source → replay, from each one's pg_stat_statements; ✔ within "
            f"{fidelity.thresholds['rows_ratio']:g}x of the rows and "
            f"{fidelity.thresholds['time_ratio']:g}x of the server time a call"
            + (
                f", {fidelity.thresholds['blocks_ratio']:g}x of the blocks"
                if "blocks_ratio" in fidelity.thresholds
                else ""
            )
            + (
                f", {fidelity.thresholds['misses_ratio']:g}x of the blocks read into shared buffers"
                if "misses_ratio" in fidelity.thresholds
                else ""
            )
            + (
                f"; statements under {fidelity.thresholds['judged_share']:.0%} of the source's "
                "time left out here"
                if judged_only
                else ""
            )
        ),
    )


def section(fidelity: Fidelity) -> Section:
    """Every replayed statement, the whole workload against the source's, the writes
    left out and the thresholds."""
    whole: list[tuple[str, Inline]] = [
        ("Verdict", (Span(fidelity.verdict, VERDICT_STYLE.get(fidelity.verdict, Style.PLAIN)),)),
        ("Source time replayed", plain(f"{fidelity.replayed_share:.1%}")),
    ]
    if fidelity.source_statements_per_commit or fidelity.replay_statements_per_commit:
        whole.append(
            (
                "Statements a commit",
                plain(
                    _figure(
                        fidelity.source_statements_per_commit or 0.0,
                        fidelity.replay_statements_per_commit,
                    )
                    + ("" if fidelity.source_statements_per_commit else " (source not sampled)")
                ),
            )
        )
    for label, source, replay in (
        ("Clients", fidelity.source_clients, fidelity.replay_clients),
        ("Protocol", fidelity.source_protocol, fidelity.replay_protocol),
    ):
        known = "not sampled" if source is None else str(source)
        whole.append((label, plain(f"{known} → {replay}")))
    for label, where in (
        ("Statements a commit from", fidelity.source_statements_per_commit_from),
        ("Clients from", fidelity.source_clients_from),
        ("The database's share from", fidelity.database_share_from),
        ("Values from", fidelity.values_from),
    ):
        if where:
            whole.append((label, plain(where)))
    blocks: list[Block] = [Items(tuple(whole)), table(fidelity, judged_only=False)]
    if fidelity.dropped_writes:
        blocks.append(
            Items(
                tuple(
                    ("", plain(f"{q[:90]} ({share:.1%}): {why}"))
                    for q, why, share in fidelity.dropped_writes
                ),
                "Writes not replayed: a change on their tables is not measured on them",
            )
        )
    if fidelity.reasons:
        blocks.append(Items(tuple(("", plain(r)) for r in fidelity.reasons), "Why not faithful"))
    thresholds = ", ".join(f"{k} {v:g}" for k, v in fidelity.thresholds.items())
    blocks.append(Items((("Thresholds", plain(thresholds + " (src/pgopt/replay/fidelity.py)")),)))
    return Section("Fidelity of the replay", tuple(blocks))
