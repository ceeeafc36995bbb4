"""The output of bench/harness_cost.py: each arm's runs (Measured), and what they
say against plain pgbench: throughput, pgbench's, the server's and the machine's
CPU per transaction, and the goal's question at the last look."""

from __future__ import annotations

import math
import statistics
import sys
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cpu_window import Window
from scipy import stats

from pgopt.analysis.verdicts import paired

GOAL = 0.98


@dataclass(frozen=True)
class Measured:
    """One arm's run: pgbench's rate and transactions, pgbench's own CPU per
    transaction, and the machine's CPU during the run (cpu_window.py)."""

    tps: float
    transactions: int
    client_us_per_tx: float  # pgbench's own CPU
    window: Window | None
    accounts_vacuumed: bool  # autovacuum vacuumed pgbench_accounts during the arm

    def per_tx_us(self, seconds: float | None) -> float | None:
        return None if seconds is None else seconds / self.transactions * 1e6

    @property
    def server_us_per_tx(self) -> float | None:
        return self.per_tx_us(self.window.server_s) if self.window else None

    @property
    def busy_us_per_tx(self) -> float | None:
        """Every process's CPU on the machine per transaction."""
        return self.per_tx_us(self.window.busy_s) if self.window else None


# output name of the medians per arm: (name of the ratio to plain, or "", the figure)
CPU_FIGURES: dict[str, tuple[str, Callable[[Measured], float | None]]] = {
    "client_cpu_us_per_tx": ("pgbench_cpu_per_tx", lambda m: m.client_us_per_tx),
    "server_cpu_us_per_tx": ("server_cpu_per_tx", lambda m: m.server_us_per_tx),
    "machine_cpu_us_per_tx": ("machine_cpu_per_tx", lambda m: m.busy_us_per_tx),
    # the CPU every process got during the run: tps ~ machine_busy / machine_cpu_per_tx
    "machine_busy_s": ("machine_busy", lambda m: m.window.busy_s if m.window else None),
    "idle_s": ("", lambda m: m.window.idle_s if m.window else None),
    "steal_s": ("", lambda m: m.window.steal_s if m.window else None),
}


def median_of(figure: Callable[[Measured], float | None], runs: list[Measured]) -> float | None:
    values = [v for m in runs if (v := figure(m)) is not None]
    return round(statistics.median(values), 3) if values else None


def paired_figure(
    figure: Callable[[Measured], float | None], plain: list[Measured], other: list[Measured]
) -> dict[str, Any] | None:
    """other/plain of `figure`, paired by round; None unless read in every run."""
    a, b = [figure(m) for m in plain], [figure(m) for m in other]
    if None in a or None in b or len(a) < 2:
        return None
    e = paired(a, b)  # type: ignore[arg-type]
    return {"ratio": round(e.ratio, 4), "ci95": [round(e.ci95[0], 4), round(e.ci95[1], 4)]}


def interval(plain: list[float], other: list[float], level: float) -> tuple[float, float]:
    """The paired t interval of other/plain at `level`, on the log ratios."""
    d = [math.log(b / a) for a, b in zip(plain, other, strict=True)]
    low, high = stats.ttest_1samp(d, 0.0).confidence_interval(level)
    return math.exp(low), math.exp(high)


def harness_summary(
    args: Namespace,
    runs: dict[str, list[Measured]],
    record: tuple[list[list[str]], list[dict[str, Any]]],
    observer: list[dict[str, Any]],
    looked: tuple[tuple[int, ...], float, str],
) -> dict[str, Any]:
    orders, disturbed = record
    planned_looks, level, decision = looked
    tps = {arm: [m.tps for m in measured] for arm, measured in runs.items()}
    rounds = len(tps["plain"])
    out: dict[str, Any] = {
        "command": "bench/harness_cost.py " + " ".join(sys.argv[1:]),
        "workload": args.workload,
        "duration_s": args.duration,
        "scale": args.scale,
        "settings": args.setting,
        "rounds": rounds,
        "looks": list(planned_looks),
        "look_level": round(level, 5),
        "orders": orders,
        "tps": tps,
        # rounds run again, with their first runs' tps and the arm that fell lowest
        "disturbed": disturbed,
        # medians per arm; the machine's figures from cpu_window.py (None: not read)
        **{
            name: {arm: median_of(figure, measured) for arm, measured in runs.items()}
            for name, (_, figure) in CPU_FIGURES.items()
        },
        # runs in which autovacuum vacuumed pgbench_accounts, per arm
        "accounts_vacuumed": {
            arm: sum(m.accounts_vacuumed for m in measured) for arm, measured in runs.items()
        },
        "vs_plain": {},
    }
    for arm, samples in tps.items():
        if arm == "plain":
            continue
        e = paired(tps["plain"], samples)
        out["vs_plain"][arm] = {
            "ratio": round(e.ratio, 4),
            "ci95": [round(e.ci95[0], 4), round(e.ci95[1], 4)],
            "cost": f"{1 - e.ratio:+.1%}",
            **{
                ratio_name: paired_figure(figure, runs["plain"], runs[arm])
                for ratio_name, figure in CPU_FIGURES.values()
                if ratio_name
            },
        }
        print(
            f"{arm}/plain: {e.ratio:.3f} [95% {e.ci95[0]:.3f}-{e.ci95[1]:.3f}], {rounds} rounds",
            file=sys.stderr,
        )
        for ratio_name, _ in CPU_FIGURES.values():
            if figure := out["vs_plain"][arm].get(ratio_name):
                low, high = figure["ci95"]
                say = f"  {ratio_name}: x{figure['ratio']:.3f} [95% {low:.3f}-{high:.3f}]"
                print(say, file=sys.stderr)
    if "pgopt" not in tps:
        return out  # the question was what pgbench's own flags cost
    low, high = interval(tps["plain"], tps["pgopt"], level)
    out["goal"] = {
        "question": f"pgopt/plain above {GOAL}",
        "interval": [round(low, 4), round(high, 4)],
        "level": round(level, 5),
        "decision": decision,
    }
    if observer:
        wall = sum(o["wall_s"] for o in observer)
        client = sum(o.get("sampler_client_cpu_s", 0) for o in observer)
        # None over --dsn: pgopt reads a backend's CPU only on a server it started
        read = [
            o["sampler_server_cpu_s"] for o in observer if o.get("sampler_server_cpu_s") is not None
        ]
        backend = sum(read) / wall if read else None
        out["sampler_core_share"] = {
            "thread": round(client / wall, 5),
            "backend": None if backend is None else round(backend, 5),
            "total": None if backend is None else round(client / wall + backend, 5),
        }
        pgbench_wall = sum(o["pgbench_wall_s"] for o in observer)
        out["pgopt_core_share"] = round(sum(o["pgopt_cpu_s"] for o in observer) / pgbench_wall, 5)
    return out
