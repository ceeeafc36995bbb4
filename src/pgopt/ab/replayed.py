"""An A/B of the source's replayed workload (`--synthesize`): the workload told before
the run; the A/B set to run it as the source's clients did (their count and protocol,
unless the user set them); and what the replay is measured against for its fidelity
(the lab's replay spec: the verdict comes with the result)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from ..consoles import err
from ..lab.spec import ReplaySpec, SourceFigures
from ..replay.synthesize import Synthesis
from ..words import flat_query
from .spec import AbSpec

DEFAULT_CLIENTS = 2  # an A/B's clients when nothing else says (ab/lab.py)


def as_the_source_ran(ab: AbSpec, synthesis: Synthesis, clients: int | None) -> AbSpec:
    """The A/B with the source's client count and protocol where the user gave none
    (`clients`: the run's --clients; where the source's are unknown, the estimate of
    its sessions' time connected, when more than DEFAULT_CLIENTS), and one pgbench thread a
    client: an application's sessions send their statements each on its own, where
    pgbench's thread serves its clients in turn and sends their commits together (a
    sysbench-like write-only transaction on 4 clients ran some 40% more commits a
    second, synchronous, on 2 threads than on 4 or under sysbench's 4:
    bench/README.md)."""
    work = synthesis.workload
    estimated = work.clients_estimated or 0  # where nothing tells them
    wanted = work.clients or (estimated if estimated > DEFAULT_CLIENTS else None)
    if wanted and clients is None and "clients" not in ab.run:
        ab = replace(ab, run={**ab.run, "clients": wanted})
    sessions = clients or ab.run.get("clients") or DEFAULT_CLIENTS
    ab = replace(ab, run={**ab.run, "threads": sessions})
    if work.protocol and ab.a.mode is None:
        ab = replace(ab, a=replace(ab.a, mode=work.protocol))
    return ab


def replay_spec(
    synthesis: Synthesis, ab: AbSpec, clients: int | None, given_clients: bool = False
) -> ReplaySpec:
    """What the replay is measured against: the source's figures of each replayed
    statement, what was left out, how the source's clients ran them (`clients`: the
    run's --clients; `given_clients`: ab.toml set them)."""
    work = synthesis.workload
    return ReplaySpec(
        statements=tuple(
            SourceFigures(
                b.name,
                b.statement.query,
                b.statement.calls,
                b.statement.total_ms,
                b.statement.rows,
                b.statement.blocks,
                b.time_share,
                b.unverified,
                b.statement.blocks_read,
                b.values_from_data,
                b.statement.max_ms,
            )
            for b in synthesis.blocks
        ),
        replayed_share=synthesis.replayed_share,
        dropped_writes=tuple(
            (k.statement.query, k.reason, k.time_share) for k in synthesis.dropped_writes
        ),
        statements_per_commit=work.statements_per_commit,
        clients=work.clients,
        protocol=work.protocol,
        replay_clients=clients or ab.run.get("clients") or DEFAULT_CLIENTS,
        replay_protocol=ab.a.mode or "simple",
        per_commit_from=work.per_commit_from,
        clients_from=work.clients_from,
        clients_given=bool(clients or given_clients),
        clients_estimated=work.clients_estimated,
        protocol_given=ab.a.mode is not None and work.protocol is None,
        database_share=work.database_share,
        database_share_from=work.database_share_from,
        values_from=work.values_from,
        host_busy=work.host_busy,
        database_cpu_share=work.database_cpu_share,
    )


def say_synthesis(synthesis: Synthesis, run_dir: Path | None) -> None:
    """The statements taken, their share of the source's time; how the source ran
    them; what was left out, writes first."""
    table = Table(title=f"workload from {synthesis.source}", title_justify="left")
    for column, justify in (("statement", "left"), ("time", "right"), ("calls", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.add_column("rows a call", justify="right")
    table.add_column("query", overflow="ellipsis", no_wrap=True, max_width=64)
    for b in synthesis.blocks:
        st = b.statement
        query = flat_query(st.query)
        table.add_row(
            b.name, f"{b.time_share:.1%}", f"{st.calls:,}", f"{st.rows_per_call:.3g}", query
        )
    err.print(table)
    err.print(
        f"the source: {synthesis.workload.note}; replayed as {synthesis.shape}", highlight=False
    )
    readme = f" (why: {run_dir / 'workload' / 'README.md'})" if run_dir else ""
    for k in synthesis.dropped_writes:
        err.print(
            f"[yellow]writes not replayed[/] ({k.time_share:.1%}): "
            f"{escape(flat_query(k.statement.query, 70))}: {escape(k.reason)}",
            markup=True,
        )
    err.print(
        f"replayed: {synthesis.replayed_share:.1%} of the source's execution time; "
        f"{len(synthesis.skipped)} statement(s) not replayed"
        + (readme if synthesis.skipped else ""),
        highlight=False,
    )
