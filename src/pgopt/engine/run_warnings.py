"""What could make one timed run's figure wrong, said beside it: a table workers
contend on with more clients than rows, the observer's problems, a client short of
CPU, failed transactions, checkpoints inside the run, a disturbed run, and pgopt's
own share of the machine (analysis/guards.py holds the thresholds)."""

from __future__ import annotations

from psycopg import sql

from .. import machine
from ..analysis import guards
from ..model.outcomes import RunRecord
from ..servers.base import Target


def contention_warning(target: Target, table: str | None, clients: int) -> str | None:
    """More clients than rows in the lab's contention table, or None."""
    if table is None:
        return None
    with target.connect() as conn:
        row = conn.execute(
            sql.SQL("select count(*) from {}").format(sql.Identifier(table))
        ).fetchone()
    return guards.contention_warning(int(row[0]) if row else 0, clients, table)


def run_warnings(
    record: RunRecord, contention: str | None, threads: int, *, quick: bool
) -> list[str]:
    """The warnings of a finished run: `threads`, pgbench's threads for it."""
    out = [contention] if contention else []
    out += record.observation.problems
    result = record.pgbench
    if result is not None:
        out += guards.run_warnings(
            client_cpu_s=result.client_cpu_s,
            wall_s=result.wall_s,
            threads=threads,
            failed=result.summary.failed,
            checkpoints=int(record.observation.stats.get("checkpoints", 0)),
            duration_s=result.summary.duration_s,
            quick=quick,
        )
    elif record.observation.stats.get("checkpoints"):
        out.append(
            f"{record.observation.stats['checkpoints']} checkpoint(s) started inside the timed run"
        )
    if record.contamination:
        out.append(f"disturbed: {record.contamination}")
    if result is not None:
        sampler = record.observation.sampler
        own_cpu = result.own_cpu_s + ((sampler.server_cpu_s or 0.0) if sampler else 0.0)
        own = guards.harness_warning(own_cpu, result.wall_s, machine.cpu_count())
        out += [own] if own else []
    return out
