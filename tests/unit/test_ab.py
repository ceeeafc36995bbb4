"""`pgopt ab` without a server: what an A/B names (ab.toml and flags), the lab it
becomes, and the copy of a source database made fit for the server it goes to."""

from dataclasses import replace
from pathlib import Path

import pytest

from pgopt.ab.lab import ab_lab
from pgopt.ab.replayed import DEFAULT_CLIENTS, as_the_source_ran, replay_spec
from pgopt.ab.source import without_foreign_column_options
from pgopt.ab.spec import AbFlags, AbSpec, Variant, read_spec
from pgopt.cli import main
from pgopt.errors import LabError
from pgopt.pgbench.command import ScriptRef
from pgopt.replay.synthesize import Synthesis
from pgopt.source.catalog import SourceWorkload

AB = """\
title = "orders: an index"
[data]
setup = ["schema.sql"]
[workload]
scripts = ["read.sql@3", "write.sql"]
clients = 4
[a]
title = "today"
settings = { work_mem = "4MB" }
[b]
title = "with the index"
sql = ["index.sql"]
settings = { random_page_cost = "1.1" }
[gate]
fail_on_regression = 5
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name in ("schema.sql", "read.sql", "write.sql", "index.sql", "other.sql"):
        (tmp_path / name).write_text("select 1;\n")
    (tmp_path / "ab.toml").write_text(AB)
    return tmp_path


def test_an_ab_file_names_data_workload_variants_and_gate(folder: Path) -> None:
    spec = read_spec(folder / "ab.toml", AbFlags(), cwd=Path("/"))
    assert spec.title == "orders: an index"
    assert spec.setup == (folder / "schema.sql",)
    assert spec.scripts == (
        ScriptRef(folder / "read.sql", weight=3),
        ScriptRef(folder / "write.sql", weight=1),
    )
    assert spec.a.settings == {"work_mem": "4MB"} and spec.a.sql == ()
    assert spec.b.sql == (folder / "index.sql",) and spec.b.title == "with the index"
    assert spec.run == {"clients": 4} and spec.fail_on_regression == 5


def test_flags_add_to_the_file_relative_to_the_current_folder(folder: Path) -> None:
    flags = AbFlags(title="asked", b_sql=("other.sql",), b_settings=("jit = off",))
    spec = read_spec(folder, flags, cwd=folder)
    assert spec.title == "asked"
    assert spec.b.sql == (folder / "index.sql", folder / "other.sql")
    assert spec.b.settings == {"random_page_cost": "1.1", "jit": "off"}


def test_a_synthesized_workload_needs_no_scripts_and_takes_its_cover(folder: Path) -> None:
    (folder / "s.toml").write_text(
        "[data]\nsource_dsn = 'postgresql:///shop'\nsample = 5\n"
        "[workload]\nsynthesize = true\ncover = 80\n"
    )
    spec = read_spec(folder / "s.toml", AbFlags(), cwd=folder)
    assert (spec.synthesize, spec.cover, spec.scripts, spec.sample) == (True, 80.0, (), 5.0)
    assert read_spec(folder / "s.toml", AbFlags(cover=95), cwd=folder).cover == 95


def test_flags_alone_make_an_ab_and_a_b_equal_to_a_is_allowed(folder: Path) -> None:
    spec = read_spec(None, AbFlags(setup=("schema.sql",), scripts=("read.sql",)), cwd=folder)
    assert spec.title == "A/B" and spec.a.sql == spec.b.sql == ()


@pytest.mark.parametrize(
    ("toml", "flags", "message"),
    [
        ("", AbFlags(scripts=("read.sql",)), "the data: a database to copy"),
        ("", AbFlags(setup=("schema.sql",)), "the workload: name pgbench scripts"),
        ("[data]\nsetup = ['nope.sql']\n", AbFlags(), "file 'nope.sql' not found"),
        ("", AbFlags(setup=("x.sql",)), "--setup x.sql: no such file"),
        ("", AbFlags(setup=("schema.sql",), scripts=("read.sql@0",)), "whole number from 1"),
        (
            "",
            AbFlags(setup=("schema.sql",), scripts=("read.sql",), b_settings=("x",)),
            "NAME=VALUE",
        ),
        ("[data]\nsetup = ['schema.sql']\ntable = ['t']\n", AbFlags(), "'table'"),
        ("[gate]\nfail_on_regression = 120\n", AbFlags(), "between 0 and 100"),
        ("[data]\ntables = ['t']\n", AbFlags(scripts=("read.sql",)), "give source_dsn"),
        ("[data]\ndump = 'x.dump'\n", AbFlags(scripts=("read.sql",)), "'dump': x.dump: no such"),
        (
            "[data]\nsource_dsn = 'postgresql:///x'\n",
            AbFlags(scripts=("read.sql",), dump="schema.sql"),
            "a source database or a dump file, not both",
        ),
        ("", AbFlags(setup=("schema.sql",), synthesize=True), "give source_dsn"),
        (
            "[data]\nsource_dsn = 'postgresql:///x'\n[workload]\nsynthesize = true\n",
            AbFlags(scripts=("read.sql",)),
            "your scripts or a synthesized one, not both",
        ),
        (
            "[data]\nsource_dsn = 'postgresql:///x'\n",
            AbFlags(synthesize=True, cover=0),
            "--cover: expected a percentage from 1 to 100, got 0",
        ),
        (
            "[data]\nsource_dsn = 'postgresql:///x'\nsample = 100\n",
            AbFlags(scripts=("read.sql",)),
            "field 'sample': expected a percentage above 0 and below 100",
        ),
        ("", AbFlags(setup=("schema.sql",), scripts=("read.sql",), sample=5), "give source_dsn"),
    ],
)
def test_bad_input_names_the_field(folder: Path, toml: str, flags: AbFlags, message: str) -> None:
    (folder / "bad.toml").write_text(toml)
    with pytest.raises(LabError, match=message):
        read_spec(folder / "bad.toml", flags, cwd=folder)


def test_each_variant_is_built_on_the_data_once_and_b_starts_from_a(
    folder: Path, tmp_path: Path
) -> None:
    spec = read_spec(folder / "ab.toml", AbFlags(), cwd=folder)
    lab = ab_lab(spec, tmp_path / "generated")
    a, b = lab.steps
    assert (a.name, b.name) == ("a", "b") and a.fresh and b.fresh
    assert lab.dataset.setup[:-1] == spec.setup and lab.dataset.setup[-1].name == "vacuum.sql"
    assert [p.name for p in a.schema] == ["analyze.sql"]
    assert [p.name for p in b.schema] == ["index.sql", "analyze.sql"]
    assert [s.weight for s in b.scripts] == [3, 1]  # A's workload
    assert b.settings == {"work_mem": "4MB", "random_page_cost": "1.1"}
    assert b.parent == "a" and lab.defaults.clients == 4 and lab.defaults.reps is None
    assert "vacuum (analyze)" in (tmp_path / "generated" / "analyze.sql").read_text()
    prepared = ab_lab(replace(spec, b=replace(spec.b, mode="prepared")), tmp_path / "g2")
    assert [s.mode for s in prepared.steps] == [lab.steps[0].mode, "prepared"]


def test_a_workload_of_many_scripts_is_described_by_its_count_and_ends(
    folder: Path, tmp_path: Path
) -> None:
    spec = read_spec(folder / "ab.toml", AbFlags(), cwd=folder)
    assert "workload (read.sql@3, " in ab_lab(spec, tmp_path / "few").description
    drawn = []
    for t in range(1, 33):
        path = tmp_path / f"transaction_{t:02d}.sql"
        path.write_text("select 1;\n")
        drawn.append(ScriptRef(path, weight=1))
    lab = ab_lab(replace(spec, scripts=tuple(drawn)), tmp_path / "many")
    assert lab.description.startswith(
        "A/B of a workload (32 scripts: transaction_01.sql@1, transaction_02.sql@1, …, "
        "transaction_32.sql@1) on data built by"
    )


def test_column_options_postgresql_does_not_define_are_left_out_of_a_copy() -> None:
    dump = (
        "CREATE TABLE public.t (id bigint);\n"
        "ALTER TABLE ONLY public.t ALTER COLUMN id SET (pg_attver=870713208);\n"
        "ALTER TABLE ONLY public.t ALTER COLUMN k SET (n_distinct=-0.5, pg_attver=1);\n"
        "COPY public.t (id) FROM stdin;\n"
    )
    text, left_out = without_foreign_column_options(dump)
    assert text == (
        "CREATE TABLE public.t (id bigint);\n"
        "ALTER TABLE ONLY public.t ALTER COLUMN k SET (n_distinct=-0.5);\n"
        "COPY public.t (id) FROM stdin;\n"
    )
    assert left_out == {"pg_attver": 2}


def test_dry_run_prints_the_plan_without_a_server(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ab", str(folder), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "segment 1: a, b" in out and "round 1:" in out


def test_junit_without_a_gate_is_refused(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "ab.toml").write_text(AB.replace("[gate]\nfail_on_regression = 5\n", ""))
    assert main(["ab", str(folder), "--junit", str(folder / "j.xml"), "--dry-run"]) == 2
    assert "--junit goes with" in capsys.readouterr().err


def test_a_replay_gives_each_of_its_clients_a_pgbench_thread(tmp_path: Path) -> None:
    """An application's sessions send their statements each on its own: the replay runs
    as many pgbench threads as clients (the source's, the user's --clients, or the
    default), where a lab's default of two threads would batch four clients' commits."""
    (tmp_path / "w.sql").write_text("select 1;\n")
    spec = AbSpec(
        title="t",
        setup=(),
        scripts=(ScriptRef(tmp_path / "w.sql", weight=1),),
        a=Variant(title="A"),
        b=Variant(title="B"),
        run={},
    )
    watched = Synthesis(
        blocks=(), scripts=(), skipped=(), chosen_share=1.0, capped=False, cover=0.9,
        workload=SourceWorkload(4.0, 4, "prepared"),
    )  # fmt: skip
    ran = as_the_source_ran(spec, watched, None)
    assert ran.run == {"clients": 4, "threads": 4} and ran.a.mode == "prepared"
    lab = ab_lab(ran, tmp_path / "lab")
    assert (lab.defaults.clients, lab.defaults.threads) == (4, 4)
    assert as_the_source_ran(spec, watched, 3).run["threads"] == 3  # --clients 3
    unknown = replace(watched, workload=SourceWorkload())
    assert as_the_source_ran(spec, unknown, None).run == {"threads": DEFAULT_CLIENTS}
    # unknown, but the source's counters say at least 3 were connected at once
    fewest = replace(watched, workload=SourceWorkload(4.0, clients_estimated=3))
    assert as_the_source_ran(spec, fewest, None).run == {"clients": 3, "threads": 3}
    assert as_the_source_ran(spec, fewest, 2).run == {"threads": 2}  # --clients 2 wins
    one = replace(watched, workload=SourceWorkload(4.0, clients_estimated=1))
    assert as_the_source_ran(spec, one, None).run == {"threads": DEFAULT_CLIENTS}


def test_what_the_replay_is_measured_against_says_which_figures_the_user_gave() -> None:
    spec = AbSpec("t", (), (), Variant("A"), Variant("B"), run={})
    kept = Synthesis(
        blocks=(), scripts=(), skipped=(), chosen_share=1.0, capped=False, cover=0.9,
        workload=SourceWorkload(4.0, clients_estimated=3),
    )  # fmt: skip
    ran = as_the_source_ran(spec, kept, None)
    replay = replay_spec(kept, ran, None)
    assert (replay.clients, replay.clients_estimated, replay.replay_clients) == (None, 3, 3)
    assert not replay.clients_given and not replay.protocol_given
    assert replay.replay_protocol == "simple"  # not known, not given: said, not assumed
    prepared = replace(ran, a=replace(ran.a, mode="prepared"))  # ab.toml's [a] mode
    assert replay_spec(kept, prepared, None).protocol_given
    watched = replace(kept, workload=SourceWorkload(4.0, 4, "prepared"))
    told = as_the_source_ran(spec, watched, None)
    assert not replay_spec(watched, told, None).protocol_given  # the source's, not the user's
