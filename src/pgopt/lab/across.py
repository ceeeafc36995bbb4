"""A lab across two servers, "a" and "b" (two PostgreSQL versions, or the same one
twice as an A/A) (pure): the lab's steps placed on them, the settings
each side is given checked against what its version knows, and what differs
between the versions besides the version itself.

`pgopt ab` has two steps already, A and B: A runs on server a, B on server b. A
lab's steps are each measured on both: step X becomes X-a on server a, the family's
baseline, and X-b on server b, compared with X-a. So every verdict of the lab
compares the two versions on one step's workload and settings; the lab's own
chain of steps is not compared (run the lab on one server for that).

Settings carried over honestly: a setting a step gives is applied on both sides
where both versions know it; a setting one side's version does not know is an
error before any server starts (it would otherwise be refused, or silently
missing, on that side). The settings only one version has, and the defaults that
changed between them, are listed in the result, so "B is faster" is never
secretly "B has a larger default".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import UsageError
from .spec import Lab, Step

DEFAULT_AB_TITLE = "A/B"  # pgopt ab's title when the user gives none (ab/spec.py)


@dataclass(frozen=True)
class Side:
    """One server of the pair: its name, its version (as its binaries say), and
    the settings its version knows (`postgres --describe-config`)."""

    name: str
    version: str
    settings: frozenset[str]


def across(lab: Lab, sides: tuple[Side, Side], chosen: list[Step]) -> Lab:
    """`lab` with its `chosen` steps placed on the two servers, each on both (pgopt
    ab's A on a and B on b); the lab's ceiling step, which measures one server's
    limit, is not among its comparisons."""
    refuse_companions(lab, chosen)
    if lab.name == "ab":
        by_name = {side.name: side for side in sides}
        steps = tuple(_placed(s, by_name[s.name]) for s in lab.steps)
        if lab.title == DEFAULT_AB_TITLE:
            lab = replace(lab, title=" against ".join(str(s.changes["server"]) for s in steps))
    else:
        steps = tuple(placed for step in chosen for placed in _pair(step, sides))
    out = replace(lab, steps=steps, metric=replace(lab.metric, ceiling=None))
    check_settings(out, sides)
    return out


def _placed(step: Step, side: Side) -> Step:
    """`step` on `side`'s server, its title and what it changes saying which."""
    version = f"PostgreSQL {side.version}"
    return replace(
        step,
        server=side.name,
        title=f"{step.title} ({version})",
        changes={**step.changes, "server": version},
    )


def _pair(step: Step, sides: tuple[Side, Side]) -> tuple[Step, Step]:
    """X-a, the family's baseline, and X-b compared with it. The article's figure is
    left out: it is compared along the lab's chain of steps, which a lab across
    versions does not compare."""
    a, b = (
        replace(_placed(step, side), name=f"{step.name}-{side.name}", sweep=None, reported=None)
        for side in sides
    )
    return replace(a, parent=None, baseline=True), replace(b, parent=a.name, baseline=False)


def shared_settings(
    common: dict[str, str], own: tuple[dict[str, str], dict[str, str]], sides: tuple[Side, Side]
) -> tuple[tuple[dict[str, str], dict[str, str]], list[str]]:
    """Each side's settings: those given to both (`--setting`) that its version has,
    then its own on top; and, said as such, each given to both that a side's version
    lacks (applied on the other side only)."""
    out, left_out = [], []
    for side, settings in zip(sides, own, strict=True):
        known = {k: v for k, v in common.items() if k.lower() in side.settings}
        left_out += [
            f"--setting {k} applies to {'b' if side.name == 'a' else 'a'} only: PostgreSQL "
            f"{side.version} ({side.name}) has no such setting"
            for k in common
            if k not in known
        ]
        out.append({**known, **settings})
    return (out[0], out[1]), left_out


def refuse_companions(lab: Lab, chosen: list[Step]) -> None:
    """Standbys, shards and poolers start beside one server: not across two."""
    if lab.standbys or lab.shards:
        kind = "standbys" if lab.standbys else "shards"
        raise UsageError(f"lab {lab.name} runs {kind}: it cannot run across two servers")
    pooled = [s.name for s in chosen if s.pooler]
    if pooled:
        raise UsageError(
            f"step {pooled[0]} of lab {lab.name} goes through a pooler: "
            "a lab across two servers has none"
        )


def check_settings(lab: Lab, sides: tuple[Side, Side]) -> None:
    """Every setting a step gives is known to its side's version."""
    by_name = {s.name: s for s in sides}
    for step in lab.steps:
        side = by_name[step.server or "a"]
        unknown = sorted(n for n in step.settings if n.lower() not in side.settings)
        if unknown:
            flag = f"--{side.name}-setting" if lab.name == "ab" else f"step {step.name}'s settings"
            raise UsageError(
                f"{flag} {unknown[0]}: PostgreSQL {side.version} (side {side.name}) has no "
                f"such setting"
            )


def settings_across(
    a: dict[str, tuple[str, str]], b: dict[str, tuple[str, str]], versions: tuple[str, str]
) -> dict[str, Any]:
    """What differs between the two versions' settings: those only one has, and the
    defaults (boot values, with their units) that changed. `a`, `b`: name -> (boot
    value, unit) as pg_settings shows them."""
    changed = {
        name: {"a": _shown(a[name]), "b": _shown(b[name])}
        for name in sorted(a.keys() & b.keys())
        if a[name] != b[name]
    }
    return {
        "versions": {"a": versions[0], "b": versions[1]},
        "only_a": sorted(a.keys() - b.keys()),
        "only_b": sorted(b.keys() - a.keys()),
        "defaults_changed": changed,
    }


def _shown(value: tuple[str, str]) -> str:
    boot, unit = value
    return f"{boot} {unit}".strip() if unit else boot
