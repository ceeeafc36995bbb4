"""The lines a report opens with, before its summary (pure): the replay's fidelity and
what the database's ratio is worth to the application, a client that limited the
rate, an incomplete run, a failed check."""

from __future__ import annotations

from ..model.result import LabResult
from ..words import plural
from . import fields, replay
from .blocks import Inline, Span, Style


def banners(result: LabResult) -> tuple[tuple[Style, Inline], ...]:
    out: list[tuple[Style, Inline]] = []
    if result.fidelity is not None:
        out.append(replay.banner(result.fidelity))
        for line in (
            replay.commits_unknown(result.fidelity, result),
            replay.application(result.fidelity, result),
        ):
            if line is not None:
                out.append(line)
    limited = fields.client_limited(result.steps)
    if limited:
        names = ", ".join(
            f"{s.name} ({s.cpu.client_busy:.0%} of {plural(s.cpu.client_threads, 'thread')})"
            for s in limited
            if s.cpu is not None
        )
        out.append(
            (
                Style.WARN,
                (
                    Span("Limited by the client", Style.STRONG),
                    Span(
                        f": pgbench kept its threads busy in {names}: its rate there is "
                        "pgbench's ceiling as much as the server's, so a ratio against it "
                        "may be smaller than the application's. More pgbench threads (a "
                        "step's threads, more --clients) or pgbench on a machine of its own "
                        "would tell."
                    ),
                ),
            )
        )
    if not result.complete:
        error = result.error or "stopped early"
        out.append(
            (
                Style.WARN,
                (
                    Span("Incomplete run", Style.STRONG),
                    Span(f" ({error}): only the runs that finished are shown."),
                ),
            )
        )
    if not result.passed:
        out.append(
            (
                Style.BAD,
                (
                    Span("A check failed", Style.STRONG),
                    Span(": see the checks column and the steps below."),
                ),
            )
        )
    return tuple(out)
