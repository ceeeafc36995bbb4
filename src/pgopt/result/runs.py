"""One run as a result record, and the figures pooled over a step's runs: latency
percentiles, the server's CPU per transaction and what observing cost (pure)."""

from __future__ import annotations

from typing import Any

from ..analysis import stats
from ..model.outcomes import RunRecord
from ..model.result import CpuShare, Latency, Run, RunPhase, Statement
from ..pgbench.parse import percentile


def server_cpu_us_per_tx(runs: list[RunRecord]) -> list[float]:
    """Microseconds of server CPU per transaction, per run where /proc could tell."""
    out = []
    for r in runs:
        if r.server_cpu_s is not None and r.pgbench and r.pgbench.summary.transactions:
            out.append(round(r.server_cpu_s * 1e6 / r.pgbench.summary.transactions, 2))
    return out


def cpu_share(runs: list[RunRecord]) -> CpuShare | None:
    """pgbench's CPU and the server's over a step's runs, in cores (medians)."""
    client, threads, server = [], [], []
    for r in runs:
        if r.pgbench is None or r.pgbench.wall_s <= 0:
            continue
        client.append(r.pgbench.client_cpu_s / r.pgbench.wall_s)
        threads.append(_threads(r.pgbench.args))
        if r.server_cpu_s is not None:
            server.append(r.server_cpu_s / r.pgbench.wall_s)
    if not client:
        return None
    return CpuShare(
        round(stats.median(client), 3),
        max(threads),
        round(stats.median(server), 3) if server else None,
    )


def _threads(args: tuple[str, ...]) -> int:
    """pgbench's --jobs in its arguments (1, its default, where not given)."""
    for flag in ("--jobs", "-j"):
        if flag in args:
            return int(args[args.index(flag) + 1])
    return 1


def latency(runs: list[RunRecord]) -> Latency | None:
    pooled: list[int] = []
    averages: list[float] = []
    for r in runs:
        if r.pgbench is None:
            continue
        pooled.extend(r.pgbench.log.latencies_us)
        if r.pgbench.summary.latency_avg_ms is not None:
            averages.append(r.pgbench.summary.latency_avg_ms)
    if not averages and not pooled:
        return None
    pooled.sort()

    def ms(q: float) -> float | None:
        v = percentile(pooled, q)
        return round(v / 1000.0, 4) if v is not None else None

    return Latency(
        avg=round(stats.median(averages), 4) if averages else None,
        p50=ms(50),
        p95=ms(95),
        p99=ms(99),
    )


COMMAND_CHARS = 200  # a script line as result.json keeps it: a replay's draws run long


def _short(command: str) -> str:
    return command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 1] + "…"


def run_result(record: RunRecord) -> Run:
    """One run as result.json keeps it."""
    pgbench = record.pgbench
    summary = pgbench.summary if pgbench else None
    background = record.background.summary if record.background else None
    return Run(
        rep=record.round,
        round=record.round,
        segment=record.segment + 1,
        position=record.position,
        value=record.value,
        started_at=record.started_at,
        pgbench_seed=record.pgbench_seed,
        server_cpu_s=record.server_cpu_s,
        contamination=record.contamination or None,
        tps=record.tps if pgbench else None,
        tps_whole_run=summary.tps if summary else None,
        transactions=summary.transactions if summary else None,
        failed=summary.failed if summary else None,
        latency_avg_ms=summary.latency_avg_ms if summary else None,
        wall_s=round(pgbench.wall_s, 3) if pgbench else None,
        client_cpu_s=round(pgbench.client_cpu_s, 3) if pgbench else None,
        threads=_threads(pgbench.args) if pgbench else None,
        progress=tuple((s.time_s, s.tps) for s in pgbench.log.seconds) if pgbench else None,
        log_sampling_rate=pgbench.log.sampling_rate if pgbench and record.detailed else None,
        detailed=record.detailed,
        slice_tps=tuple(record.slice_tps) or None,
        statements=tuple(
            Statement(st.script, st.latency_ms, _short(st.command)) for st in summary.statements
        )
        if summary
        else None,
        script_transactions=tuple(sc.transactions or 0 for sc in summary.scripts) or None
        if summary
        else None,
        phases=tuple(run_phase(record, n, sec) for n, sec in record.phases) or None,
        background={
            "tps": background.tps,
            "transactions": background.transactions,
            "failed": background.failed,
        }
        if background
        else None,
        monitor=record.monitor or None,
        facts=record.facts or None,
        waits=dict(record.observation.waits.most_common()),
        observer=observer_dict(record),
        stats=record.observation.stats,
        warnings=tuple(record.warnings),
    )


def run_phase(record: RunRecord, name: str, seconds: float) -> RunPhase:
    observed = record.observation.phases.get(name)
    if observed is None:
        return RunPhase(name, round(seconds, 3))
    return RunPhase(name, round(seconds, 3), observed.wal_bytes, dict(observed.waits.most_common()))


def observer_dict(record: RunRecord) -> dict[str, Any]:
    """What observing the run cost: pgopt's own CPU while pgbench ran (its process, all
    threads), and the sampler's (its thread and the backend serving it)."""
    obs = record.observation
    out: dict[str, Any] = {"wall_s": obs.wall_s}
    if record.pgbench is not None:
        out["pgopt_cpu_s"] = round(record.pgbench.own_cpu_s, 4)
        out["pgbench_wall_s"] = round(record.pgbench.wall_s, 3)
    if obs.sampler is not None:
        out.update(
            {
                "sampler_interval_s": obs.sampler.interval_s,
                "samples": obs.sampler.samples,
                "sampler_client_cpu_s": obs.sampler.client_cpu_s,
                "sampler_server_cpu_s": obs.sampler.server_cpu_s,
            }
        )
    return out


def observer_summary(runs: list[RunRecord]) -> dict[str, Any] | None:
    """Across a lab's runs, as shares of one core: the sampler's CPU (its thread and its
    backend) and pgopt's own process while pgbench ran; median and max."""
    sampler: list[float] = []
    own: list[float] = []
    for r in runs:
        obs = r.observation
        if obs.sampler is not None and obs.wall_s > 0:
            server = obs.sampler.server_cpu_s or 0.0
            sampler.append((obs.sampler.client_cpu_s + server) / obs.wall_s)
        if r.pgbench is not None and r.pgbench.wall_s > 0:
            own.append(r.pgbench.own_cpu_s / r.pgbench.wall_s)
    out: dict[str, Any] = {}
    if sampler:
        out["sampler_core_share"] = {"median": stats.median(sampler), "max": max(sampler)}
    if own:
        out["pgopt_core_share"] = {"median": stats.median(own), "max": max(own)}
    return out or None
