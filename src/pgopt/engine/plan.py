"""Which runs, in which order: the plan of a lab run, decided before anything runs (pure).

Steps are grouped into segments: a step that changes the schema (CLUSTER, a new
table layout) starts a new one, because its change would leak into the steps
around it. Within a segment every *round* runs each step once, in an order drawn
at random per round from the run's seed: a fixed order (A B A B, or A B B A) lets
drift and periodic noise favour one side. Every step of a round gets the same
pgbench `--random-seed` (common random numbers), a new one per round.

With sequential looks (`--reps auto`) a segment plans up to the last look's
rounds and the engine stops it at a look where every comparison is decided.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from ..analysis.verdicts import FIXED_ALPHA, SEQUENTIAL_ALPHA
from ..errors import LabError
from ..lab import expressions
from ..lab.spec import Lab, Step
from ..model.plan import Plan, Round, Segment
from ..params import LOOKS, RunParams, select_steps
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


def draw_rounds(seed: int, segment: int, names: Sequence[str], count: int) -> tuple[Round, ...]:
    """`count` rounds of `names`, each in its own random order; the same seed gives the
    same rounds, and round r does not depend on how many rounds follow it."""
    rounds = []
    for number in range(1, count + 1):
        rng = random.Random(f"pgopt/{seed}/{segment}/{number}")
        order = list(names)
        rng.shuffle(order)
        rounds.append(Round(number, tuple(order), rng.randrange(1, 2**31)))
    return tuple(rounds)


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
        settings, facts.contexts, owned=facts.owned, allow_settings=facts.allow_settings
    )
    reason = reason or unavailable
    major = facts.version_num // 10000
    if step.min_server is not None and major < step.min_server:
        reason = f"needs PostgreSQL {step.min_server} or later; this server is {major}"
    if step.min_pgbench is not None and facts.pgbench_major < step.min_pgbench:
        reason = f"needs pgbench {step.min_pgbench} or later; this pgbench is {facts.pgbench_major}"
    return reason


def step_settings(step: Step, params: RunParams) -> dict[str, str]:
    """The step's settings with machine and dataset figures filled in
    (`{ram_mb // 4}MB`, `{16 * scale}GB`)."""
    names = {"ram_mb": params.ram_bytes / 2**20, "cpus": float(params.cpus), "scale": params.scale}
    return expressions.resolve(step.settings, names)


def plan_steps(
    lab: Lab, params: RunParams, facts: ServerFacts, unavailable: Mapping[str, str] | None = None
) -> Plan:
    """The plan of a lab run: its selected steps, on a server with `facts`."""
    steps = select_steps(lab, list(params.steps))
    return make_plan(
        steps,
        seed=params.seed,
        reps=params.reps,
        margin=params.margin,
        restart=params.restart,
        settings={s.name: step_settings(s, params) for s in steps},
        facts=facts,
        unavailable=unavailable,
    )


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
) -> Plan:
    """The plan for the selected `steps` on a server with `facts`: the steps it cannot
    run are skipped with their reason; `reps` None means sequential looks; `settings`
    are each step's resolved settings."""
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
        segments.append(
            Segment(
                index=index,
                steps=names,
                rounds=draw_rounds(seed, index, names, count),
                looks=LOOKS if sequential else (),
                restart_each_run=bool(why),
                why_restart=why,
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
