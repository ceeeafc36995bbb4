"""The plan: segments, rounds in random orders, common random numbers, restarts."""

from collections import Counter
from pathlib import Path

import pytest

from pgopt.analysis.verdicts import FIXED_ALPHA, SEQUENTIAL_ALPHA
from pgopt.engine.plan import draw_rounds, make_plan, split_segments
from pgopt.errors import LabError, SettingsError
from pgopt.lab import load_lab
from pgopt.params import LOOKS
from pgopt.servers.facts import ServerFacts

from .test_lab_load import write_lab

CONTEXTS = {"synchronous_commit": "user", "shared_buffers": "postmaster"}
FACTS = ServerFacts(kind="embedded", version_num=180006, pgbench_major=18, contexts=CONTEXTS)
USERS_SERVER = ServerFacts(
    kind="dsn",
    version_num=150014,
    pgbench_major=18,
    contexts=CONTEXTS,
    owned=False,
    allow_settings=False,
)


def plan_for(folder: Path, **overrides: object):  # type: ignore[no-untyped-def]
    lab = load_lab(write_lab(folder))
    args: dict[str, object] = {
        "seed": 1,
        "reps": None,
        "margin": 0.03,
        "restart": False,
        "settings": {s.name: dict(s.settings) for s in lab.steps},
        "facts": FACTS,
    }
    args.update(overrides)
    return make_plan(list(lab.steps), **args)  # type: ignore[arg-type]


def test_segments_split_at_schema_changes(tmp_path: Path) -> None:
    lab = load_lab(write_lab(tmp_path / "mine"))
    parts = split_segments(list(lab.steps))
    assert [[s.name for s in p] for p in parts] == [
        ["baseline", "async"],
        ["cluster", "sweep-c1", "sweep-c4"],
    ]


def test_every_round_runs_every_step_once_in_its_own_random_order() -> None:
    names = ("a", "b", "c")
    rounds = draw_rounds(7, 0, names, 60)
    assert all(sorted(r.order) == sorted(names) for r in rounds)
    assert len({r.order for r in rounds}) == 6  # all 3! orders occur
    first = Counter(r.order[0] for r in rounds)
    assert min(first.values()) >= 10  # no step is favoured by going first (60 / 3 = 20)


def test_rounds_are_reproducible_and_do_not_depend_on_how_many_follow() -> None:
    names = ("a", "b")
    assert draw_rounds(1, 0, names, 10) == draw_rounds(1, 0, names, 10)
    assert draw_rounds(1, 0, names, 4) == draw_rounds(1, 0, names, 10)[:4]
    assert draw_rounds(1, 0, names, 10) != draw_rounds(2, 0, names, 10)
    assert draw_rounds(1, 0, names, 10) != draw_rounds(1, 1, names, 10)


def test_one_pgbench_seed_per_round_a_new_one_each_round() -> None:
    rounds = draw_rounds(3, 0, ("a", "b"), 10)
    assert len({r.pgbench_seed for r in rounds}) == 10


def test_sequential_plan_runs_to_the_last_look_and_a_fixed_one_to_its_count(
    tmp_path: Path,
) -> None:
    auto = plan_for(tmp_path / "a")
    assert auto.sequential and auto.alpha == SEQUENTIAL_ALPHA
    assert all(len(s.rounds) == LOOKS[-1] and s.looks == LOOKS for s in auto.segments)
    fixed = plan_for(tmp_path / "f", reps=5)
    assert not fixed.sequential and fixed.alpha == FIXED_ALPHA
    assert all(len(s.rounds) == 5 and s.looks == () for s in fixed.segments)
    assert "round 1:" in "\n".join(fixed.describe())


def test_steps_that_differ_in_a_restart_only_setting_restart_before_every_run(
    tmp_path: Path,
) -> None:
    lab = load_lab(write_lab(tmp_path / "r"))
    settings = {s.name: dict(s.settings) for s in lab.steps}
    settings["async"] = {**settings["async"], "shared_buffers": "1GB"}
    plan = plan_for(tmp_path / "r2", settings=settings)
    first, second = plan.segments
    assert first.restart_each_run and "shared_buffers" in first.why_restart
    assert not second.restart_each_run
    everywhere = plan_for(tmp_path / "r3", restart=True)
    assert all(s.restart_each_run for s in everywhere.segments)


def test_what_a_server_cannot_run_is_skipped_with_its_reason(tmp_path: Path) -> None:
    lab = load_lab(write_lab(tmp_path / "s"))
    settings = {s.name: dict(s.settings) for s in lab.steps}
    settings["cluster"] = {**settings["cluster"], "shared_buffers": "1GB"}
    allowed = ServerFacts(**{**USERS_SERVER.__dict__, "allow_settings": True})
    plan = plan_for(tmp_path / "s2", settings=settings, facts=allowed)
    assert plan.skipped == (
        (
            "cluster",
            "shared_buffers needs a restart, and pgopt never restarts a server it did not start",
        ),
    )
    assert all("cluster" not in s.steps for s in plan.segments)
    # settings on a user's server need --allow-settings: an error, not a skip
    with pytest.raises(SettingsError, match="--allow-settings"):
        plan_for(tmp_path / "s3", facts=USERS_SERVER)
    # a step the probe cannot serve, and a baseline that cannot run
    plan = plan_for(tmp_path / "s4", unavailable={"async": "no Redis"})
    assert plan.skipped == (("async", "no Redis"),)
    with pytest.raises(LabError, match="the baseline step cannot run on this server: no Redis"):
        plan_for(tmp_path / "s5", unavailable={"baseline": "no Redis"})
    with pytest.raises(SettingsError, match="unknown setting 'synchronous_commit'"):
        plan_for(tmp_path / "s6", facts=ServerFacts("embedded", 180006, 18, {}))
