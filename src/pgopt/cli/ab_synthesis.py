"""What `pgopt ab --synthesize` tells the user: the workload it made from the
source's pg_stat_statements before the run, and how faithful the replay was after."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.table import Table

from ..ab.fidelity import fidelity, fidelity_markdown, widest_gaps
from ..ab.synthesize import Synthesis
from ..ab.workload_files import flat_query
from ..model.result import Run
from ..store import write_atomic
from .app import err, out


def say_synthesis(synthesis: Synthesis, run_dir: Path | None) -> None:
    """The statements taken, their share of the source's time and weight; what was skipped."""
    table = Table(title="workload from pg_stat_statements", title_justify="left")
    for column, justify in (("script", "left"), ("time", "right"), ("weight", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.add_column("statement", overflow="ellipsis", no_wrap=True, max_width=70)
    for s in synthesis.scripts:
        query = escape(flat_query(s.statement.query))
        table.add_row(s.name, f"{s.time_share:.1%}", str(s.weight), query)
    err.print(table)
    err.print(
        f"replayed: {synthesis.replayed_share:.1%} of the source's execution time; "
        f"{len(synthesis.skipped)} statement(s) not replayed"
        + (
            f" (why: {run_dir / 'workload' / 'README.md'})" if run_dir and synthesis.skipped else ""
        ),
        highlight=False,
    )


def say_fidelity(synthesis: Synthesis, runs: tuple[Run, ...], run_dir: Path) -> None:
    """Each statement's share of calls and time, source beside replay; fidelity.md."""
    rows = fidelity(synthesis, runs)
    if rows is None:
        return  # one script: its share is all of both
    path = run_dir / "workload" / "fidelity.md"
    write_atomic(path, fidelity_markdown(rows, synthesis))
    table = Table(title="fidelity: share in the source / in the replay", title_justify="left")
    table.add_column("script")
    table.add_column("calls", justify="right")
    table.add_column("time", justify="right")
    table.add_column("statement", overflow="ellipsis", no_wrap=True, max_width=60)
    for r in rows:
        table.add_row(
            r.name,
            f"{r.source_calls:.1%} / {r.replay_calls:.1%}",
            f"{r.source_time:.1%} / {r.replay_time:.1%}",
            escape(flat_query(r.query)),
        )
    out.print(table)
    calls_gap, time_gap = widest_gaps(rows)
    out.print(
        f"calls within {calls_gap:.1f} points of the source's mix, time within "
        f"{time_gap:.1f}: {path}",
        highlight=False,
    )
