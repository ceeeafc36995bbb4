"""`--dry-run`'s estimate of an A/B on a copy of the user's data: from its size, the
copy, the restore and each variant's template once; a clone before every run of a
workload that writes, nothing for one that only reads."""

from pathlib import Path

from pgopt.ab.lab import ab_lab
from pgopt.ab.spec import AbSpec, Variant
from pgopt.engine.estimate import BUILD_BPS, CLONE_BPS, DUMP_BPS, RESTORE_BPS, estimate
from pgopt.engine.plan import plan_steps
from pgopt.params import resolve_params
from pgopt.pgbench.command import ScriptRef
from pgopt.servers.facts import ServerFacts

FACTS = ServerFacts(kind="embedded", version_num=180006, pgbench_major=18, contexts={})
GB = 10**9


def estimate_for(tmp_path: Path, script: str, data_bytes: int | None):  # type: ignore[no-untyped-def]
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "w.sql").write_text(script)
    (tmp_path / "index.sql").write_text("create index on t (v);\n")
    spec = AbSpec(
        title="t",
        setup=(),
        scripts=(ScriptRef(tmp_path / "w.sql", weight=1),),
        a=Variant(title="A"),
        b=Variant(title="B", sql=(tmp_path / "index.sql",)),
        run={},
    )
    lab = ab_lab(spec, tmp_path / "lab")
    params = resolve_params(lab, duration=10, reps=3)
    return estimate(lab, params, plan_steps(lab, params, FACTS), data_bytes)


def test_a_reading_workload_pays_for_the_data_once(tmp_path: Path) -> None:
    found = estimate_for(tmp_path, "select v from t where id = 1;\n", 5 * GB)
    parts = dict(found.parts)
    assert parts["copying"] == 5 * GB / DUMP_BPS
    assert parts["restoring"] == 5 * GB / RESTORE_BPS
    assert parts["building the variants"] == 2 * 5 * GB / BUILD_BPS  # A's and B's
    assert parts["measuring"] == 6 * 10  # an A/B warms up only when asked to
    assert parts["preparing the runs"] < 6 * 1  # no copy before a run


def test_a_writing_workload_pays_a_clone_before_every_run(tmp_path: Path) -> None:
    reads = dict(estimate_for(tmp_path / "r", "select 1;\n", 5 * GB).parts)
    writes = estimate_for(tmp_path / "w", "update t set v = 1;\n", 5 * GB)
    extra = dict(writes.parts)["preparing the runs"] - reads["preparing the runs"]
    assert abs(extra - 6 * (0.3 + 5 * GB / CLONE_BPS)) < 1e-6
    assert "copying" in writes.describe() and "measuring 60 s" in writes.describe()


def test_without_a_copy_no_parts_are_claimed(tmp_path: Path) -> None:
    assert estimate_for(tmp_path, "select 1;\n", None).parts == ()
