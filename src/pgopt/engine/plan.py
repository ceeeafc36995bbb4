"""Which runs, in which order: the plan of a lab run, decided before anything runs (pure).

Steps are grouped into segments: a step that changes the schema (CLUSTER, a new
table layout) starts a new one, because its change would leak into the steps
around it. Within a segment every *round* runs each step once, in an order drawn
at random per round from the run's seed: a fixed order (A B A B, or A B B A) lets
drift and periodic noise favour one side. Every step of a round gets the same
pgbench `--random-seed` (common random numbers), a new one per round.

With sequential looks (`--reps auto`) a segment plans up to the last look's
rounds and the engine stops it at a look where every comparison is decided.

Where the runs allow it, each step's run in a round is cut into slices of
`--slice` seconds that take turns with the other steps' (engine/slices.py): the
machine drifts over tens of seconds, and sides measured a second apart share
more of its drift than sides measured a whole run apart (docs/method.md, "Where
the noise comes from"). A round whose runs are detailed (`--latencies`) runs
whole, so pgbench's latencies stay those of a whole run. Once the steps' data is
built, a segment whose data together is more than shared_buffers runs whole too
(`crowded_reason`: taking turns, each step would evict the other's pages).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..analysis.verdicts import FIXED_ALPHA, SEQUENTIAL_ALPHA
from ..errors import LabError
from ..lab import expressions
from ..lab.spec import Lab, MetricSource, Step
from ..model.plan import Plan, Round, Segment
from ..params import LOOKS, RunParams, is_detailed, select_steps
from ..report.fmt import format_bytes
from ..servers.facts import ServerFacts
from ..servers.settings import unsupported_reason


def split_segments(steps: Sequence[Step]) -> list[list[Step]]:
    """Split steps where a step changes the schema; each part runs in shared rounds."""
    out: list[list[Step]] = []
    for step in steps:
        if not out or (step.schema and not step.fresh):
            out.append([step])
        else:
            out[-1].append(step)
    return out


def draw_rounds(
    seed: int,
    segment: int,
    names: Sequence[str],
    count: int,
    slices: Callable[[int], int] = lambda _number: 1,
) -> tuple[Round, ...]:
    """`count` rounds of `names`, each in its own random order; the same seed gives the
    same rounds, and round r does not depend on how many rounds follow it. `slices`:
    how many slices round r's runs are cut into."""
    rounds = []
    for number in range(1, count + 1):
        rng = random.Random(f"pgopt/{seed}/{segment}/{number}")
        order = list(names)
        rng.shuffle(order)
        rounds.append(Round(number, tuple(order), rng.randrange(1, 2**31), slices(number)))
    return tuple(rounds)


def slice_orders(order: Sequence[str], slices: int) -> list[tuple[str, ...]]:
    """The steps' turns in each slice of a round: the round's order, then the same
    reversed, and so on (A B, B A, A B, ...): a drift that is linear over two slices
    falls on every step alike."""
    forward = tuple(order)
    return [forward if i % 2 == 0 else forward[::-1] for i in range(slices)]


def slice_seed(round_seed: int, number: int) -> int:
    """The pgbench seed of a round's slice `number` (1-based): shared by every step's
    slice of that number (common random numbers), new from one slice to the next."""
    return random.Random(f"pgopt/slice/{round_seed}/{number}").randrange(1, 2**31)


def whole_runs_reason(lab: Lab, steps: Sequence[Step], params: RunParams, across: bool) -> str:
    """Why the runs of `steps` cannot be cut into slices, or '': slices are pgbench
    runs of a few seconds that take turns on one server, with nothing else timed."""
    if not params.slice_s:
        return "--slice 0"
    if len(steps) < 2:
        return "one step: no other to take turns with"
    if params.duration_s < 2 * params.slice_s:
        return f"runs of {params.duration_s}s are shorter than two slices of {params.slice_s}s"
    if params.latencies == "all":
        return "--latencies all: every run keeps pgbench's latencies"
    if lab.metric.source is not MetricSource.TPS:
        return f"the lab's figure is {lab.metric.source.value}, not pgbench's rate"
    if lab.shards or lab.standbys or across:
        return "its runs span more than one server"
    for step in steps:
        what = (
            (step.phases, "is timed by phases"),
            (step.probe, "is timed by a probe"),
            (step.transactions, "runs a count of transactions"),
            (step.background, "has a second pgbench beside it"),
            (step.monitor, "monitors its own SQL through the run"),
            (step.pooler, "runs through a pooler"),
        )
        for present, why in what:
            if present:
                return f"step {step.name} {why}"
    return ""


def _restart_reason(
    names: Sequence[str],
    settings: Mapping[str, Mapping[str, str]],
    restart_only: frozenset[str],
) -> str:
    """Why every run of the segment needs a fresh postmaster, or '': its steps differ
    in a setting that only a restart applies, so some runs would start cold."""
    differing = sorted(
        name for name in restart_only if len({settings[step].get(name) for step in names}) > 1
    )
    return f"steps differ in {', '.join(differing)}" if differing else ""


def skip_reason(
    step: Step, settings: Mapping[str, str], facts: ServerFacts, unavailable: str | None
) -> str | None:
    """Why `step` cannot run on this server, or None; raises for settings that are errors
    on any server. `unavailable`: why a probe it needs cannot run (found at run time)."""
    reason = unsupported_reason(
        settings,
        facts.contexts,
        owned=facts.owned,
        allow_settings=facts.allow_settings,
        rights=facts.rights,
    )
    reason = reason or unavailable
    major = facts.version_num // 10000
    if step.min_server is not None and major < step.min_server:
        reason = f"needs PostgreSQL {step.min_server} or later; this server is {major}"
    if step.min_pgbench is not None and facts.pgbench_major < step.min_pgbench:
        reason = f"needs pgbench {step.min_pgbench} or later; this pgbench is {facts.pgbench_major}"
    return reason


def step_settings(lab: Lab, step: Step, params: RunParams) -> dict[str, str]:
    """The step's settings with machine and dataset figures filled in
    (`{ram_mb // 4}MB`, `{16 * scale}GB`); one that these figures fail (`{ram_mb //
    (cpus - 2)}` on 2 CPUs) is the lab's error, named."""
    names = {"ram_mb": params.ram_bytes / 2**20, "cpus": float(params.cpus), "scale": params.scale}
    try:
        return expressions.resolve(step.settings, names)
    except expressions.FigureError as e:
        raise LabError(f"lab {lab.name!r}: step {step.name!r}: field 'settings': {e}") from None


def plan_steps(
    lab: Lab,
    params: RunParams,
    facts: ServerFacts,
    unavailable: Mapping[str, str] | None = None,
    *,
    across: bool = False,
) -> Plan:
    """The plan of a lab run: its selected steps, on a server with `facts` (`across`:
    each step on a server of its own)."""
    steps = select_steps(lab, list(params.steps))
    return make_plan(
        steps,
        seed=params.seed,
        reps=params.reps,
        margin=params.margin,
        restart=params.restart,
        settings={s.name: step_settings(lab, s, params) for s in steps},
        facts=facts,
        unavailable=unavailable,
        slices=Slicing(params.slice_s, params.duration_s, params.latencies),
        whole=lambda part: whole_runs_reason(lab, part, params, across),
    )


@dataclass(frozen=True)
class Slicing:
    """What cutting runs into slices depends on: the seconds of a slice (0: none), of
    a run, and `--latencies` (a detailed round runs whole)."""

    slice_s: int = 0
    duration_s: int = 0
    latencies: str = "first"

    def rounds(self, why_whole: str) -> tuple[int, Callable[[int], int]]:
        """The seconds of a slice (0: whole runs) and how many slices round r has."""
        if why_whole or not self.slice_s or self.duration_s < 2 * self.slice_s:
            return 0, lambda _number: 1
        cut = self.duration_s // self.slice_s
        return self.slice_s, lambda n: 1 if is_detailed(self.latencies, n) else cut


def make_plan(
    steps: Sequence[Step],
    *,
    seed: int,
    reps: int | None,
    margin: float,
    restart: bool,
    settings: Mapping[str, Mapping[str, str]],
    facts: ServerFacts,
    unavailable: Mapping[str, str] | None = None,
    slices: Slicing = Slicing(),
    whole: Callable[[Sequence[Step]], str] = lambda _steps: "",
) -> Plan:
    """The plan for the selected `steps` on a server with `facts`: the steps it cannot
    run are skipped with their reason; `reps` None means sequential looks; `settings`
    are each step's resolved settings; `slices`: how runs may be cut, and `whole` why
    a segment's steps cannot be, or ''."""
    skipped = []
    runnable = []
    for step in steps:
        why = skip_reason(step, settings[step.name], facts, (unavailable or {}).get(step.name))
        if why is None:
            runnable.append(step)
        else:
            skipped.append((step.name, why))
    if not runnable or runnable[0] is not steps[0]:
        reason = skipped[0][1] if skipped else "not selected"
        raise LabError(f"the baseline step cannot run on this server: {reason}")
    sequential = reps is None
    count = LOOKS[-1] if reps is None else reps
    segments = []
    for index, part in enumerate(split_segments(runnable)):
        names = tuple(s.name for s in part)
        why = "the lab restarts before every run" if restart else ""
        why = why or _restart_reason(names, settings, facts.restart_only)
        why_whole = "every run starts on a fresh postmaster" if why else whole(part)
        slice_s, cut = slices.rounds(why_whole)
        segments.append(
            Segment(
                index=index,
                steps=names,
                rounds=draw_rounds(seed, index, names, count, cut),
                looks=LOOKS if sequential else (),
                restart_each_run=bool(why),
                why_restart=why,
                slice_s=slice_s,
                why_whole=why_whole,
            )
        )
    return Plan(
        seed=seed,
        sequential=sequential,
        alpha=SEQUENTIAL_ALPHA if sequential else FIXED_ALPHA,
        margin=margin,
        segments=tuple(segments),
        skipped=tuple(skipped),
    )


def crowded_reason(live_bytes: int, shared_buffers_bytes: int) -> str:
    """Why a segment's sliced rounds would not measure each step as it runs alone, or
    '': its steps' data, all live at once in a sliced round (a clone each, or each
    template), is more than shared_buffers. Taking turns, each step's slice finds the
    other steps' pages in the cache and evicts them for its own (and their dirty pages
    written first), where a step run whole has the cache to itself, as the source
    has. Measured: sysbench `oltp_write_only`'s two clones (210-330 MB in 128 MB)
    read up to 3x the blocks a transaction from the second round on, the server's CPU
    a transaction 30-50% up, against steady figures in whole runs (bench/README.md)."""
    if live_bytes <= shared_buffers_bytes:
        return ""
    return (
        f"the steps' data together ({format_bytes(live_bytes)}) is more than "
        f"shared_buffers ({format_bytes(shared_buffers_bytes)}): in slices taking turns "
        "each would evict the other's pages, where run whole it has the cache alone"
    )


def as_whole(segment: Segment, why: str) -> Segment:
    """`segment` with every round run whole, `why` said."""
    rounds = tuple(replace(r, slices=1) for r in segment.rounds)
    return replace(segment, rounds=rounds, slice_s=0, why_whole=why)
