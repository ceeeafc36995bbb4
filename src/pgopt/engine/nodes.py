"""One step's pgbench on the nodes of a cluster: the primary and its hot standbys.

In a lab with standbys (`[cluster] standbys = N`), a step runs its pgbench on the
primary (`nodes = "primary"`, the default), on the standbys, or on all of them: one
pgbench per node, all started together, the step's clients and client threads
shared among them (the first nodes take one more where they do not divide), and
the step's rate is their sum. Every run of such a lab also reads each node's
server CPU (where the server runs on this machine), so the report can say what
each node did: its rate, the share of a core its server used, and its CPU per
transaction of the step.

From those costs comes a model, stated as one: with each node on a machine of its
own with this machine's cores, clients elsewhere, and the step's work shared among
the nodes as it was here, the node that spends the most CPU per transaction of the
step saturates first, so the step reaches at most cores / (that node's server CPU
per step transaction). It assumes the work stays CPU-bound and costs per
transaction what it cost here (a standby's replay, a shard's share of the
queries), and that the network between the machines costs nothing. On one machine
the nodes share its cores, so the measured rate of several nodes is never what
separate machines would give.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from ..errors import LabError
from ..lab.spec import Step
from ..servers.base import Target
from .context import RunContext

T = TypeVar("T")


@dataclass(frozen=True)
class Node:
    """Where one of a step's pgbench processes runs, and with how many clients."""

    name: str
    target: Target
    clients: int
    threads: int


def cluster(ctx: RunContext) -> list[tuple[str, Target]]:
    """Every node of the run, primary (or coordinator) first, then standbys and shards."""
    standbys = [(f"standby{i}", s) for i, s in enumerate(ctx.standbys, 1)]
    shards = [(f"shard{i}", s) for i, s in enumerate(ctx.shards, 1)]
    return [(lab_server_name(ctx), ctx.target), *standbys, *shards]


def lab_server_name(ctx: RunContext) -> str:
    """The lab's own server: the primary of its standbys, the coordinator of its shards."""
    return "coordinator" if ctx.shards and not ctx.standbys else "primary"


def clustered(ctx: RunContext) -> bool:
    """Whether this run has servers beside the lab's own."""
    return bool(ctx.standbys or ctx.shards)


def share(total: int, parts: int) -> list[int]:
    """`total` split into `parts` as evenly as whole numbers allow, larger parts first."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def nodes_for(ctx: RunContext, step: Step) -> list[Node]:
    """The nodes `step` runs its pgbench on, each with its share of the clients."""
    lab_server, *others = cluster(ctx)
    standbys = [(name, target) for name, target in others if target in ctx.standbys]
    chosen = {
        "primary": [lab_server],
        "standbys": standbys,
        "all": [lab_server, *standbys],
    }[step.nodes]
    clients, threads = ctx.clients_threads(step)
    if clients < len(chosen):
        raise LabError(
            f"step {step.name}: {clients} clients cannot be shared among {len(chosen)} nodes"
        )
    return [
        Node(name, target, c, max(1, min(t, c)))
        for (name, target), c, t in zip(
            chosen,
            share(clients, len(chosen)),
            share(max(threads, len(chosen)), len(chosen)),
            strict=True,
        )
    ]


def cpu_readings(ctx: RunContext) -> dict[str, float | None]:
    """Each node's server CPU seconds so far (None where pgopt cannot read them)."""
    return {name: target.server_cpu_s() for name, target in cluster(ctx)}


def node_facts(
    cpu: tuple[dict[str, float | None], dict[str, float | None]],
    served: dict[str, int],
    rates: dict[str, float],
    wall_s: float,
    cores: int,
) -> dict[str, str]:
    """Pure: one run's per-node figures from each node's server CPU seconds before and
    after it, the transactions and rate of each node that ran pgbench, and the run's
    wall time; and the model's rate (module docstring)."""
    before, after = cpu
    facts: dict[str, str] = {}
    total = sum(served.values())
    per_tx: dict[str, float] = {}
    for name in before:
        if name in rates:
            facts[f"{name} tx/s"] = f"{rates[name]:.6g}"
        start, end = before[name], after.get(name)
        if start is None or end is None or wall_s <= 0:
            continue
        used = end - start
        facts[f"{name} server CPU, % of a core"] = f"{100 * used / wall_s:.3g}"
        if total:
            per_tx[name] = used / total
            facts[f"{name} server CPU per step tx, µs"] = f"{1e6 * per_tx[name]:.4g}"
    if per_tx and len(per_tx) == len(before) and max(per_tx.values()) > 0:
        key = f"model: tx/s with each node on a {cores}-core machine of its own"
        facts[key] = f"{cores / max(per_tx.values()):.6g}"
    return facts


def run_together(nodes: list[Node], run: Callable[[Node, threading.Event], T]) -> list[T]:
    """`run(node, cancel)` for every node at once; when one fails or pgopt is
    interrupted, `cancel` is set so the others stop too."""
    cancel = threading.Event()
    with ThreadPoolExecutor(len(nodes), thread_name_prefix="pgopt-node") as pool:
        futures = [pool.submit(run, node, cancel) for node in nodes]
        try:
            return [f.result() for f in futures]
        except BaseException:
            cancel.set()
            raise
