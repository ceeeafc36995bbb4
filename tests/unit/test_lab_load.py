"""Lab files: the built-in labs load, a user's lab loads, and errors name file, step and field."""

import tomllib
from pathlib import Path

import pytest

from pgopt.cli import main
from pgopt.errors import LabError, UsageError
from pgopt.lab import builtin_labs, lab_from_dict, load_lab, resolve_lab
from pgopt.params import resolve_params, select_steps

MINIMAL = """
title = "My lab"

[dataset]
variable = "rows"
size = 1000
setup = ["setup.sql"]

[[steps]]
name = "baseline"
scripts = ["bench.sql"]
reported = 100

[[steps]]
name = "async"
settings = { synchronous_commit = "off" }
mode = "prepared"
reported = { value = 250, unit = "tx/s", note = "article" }

[[steps]]
name = "cluster"
schema = ["cluster.sql"]

[[steps]]
name = "sweep"
from = "baseline"
sweep = { clients = [1, 4] }
"""


def write_lab(folder: Path, toml: str = MINIMAL) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lab.toml").write_text(toml)
    for name in ("setup.sql", "bench.sql", "cluster.sql"):
        (folder / name).write_text("select 1;\n")
    return folder


def test_builtin_labs_load_each_under_its_folder_name() -> None:
    labs = builtin_labs()
    assert {lab.name for lab in labs} == {
        "batch",
        "ingest",
        "keylookup",
        "login",
        "queue",
        "replicas",
        "sequence",
        "shards",
        "smoke",
    }
    assert all(lab.name == lab.path.name for lab in labs)


def test_a_user_lab_loads_with_inheritance(tmp_path: Path) -> None:
    lab = load_lab(write_lab(tmp_path / "mine"))
    assert [s.name for s in lab.steps] == ["baseline", "async", "cluster", "sweep-c1", "sweep-c4"]
    base, async_, cluster = lab.steps[:3]
    assert async_.scripts == base.scripts
    assert async_.changes == {"settings": {"synchronous_commit": "off"}, "mode": "prepared"}
    assert cluster.settings == {"synchronous_commit": "off"} and cluster.mode == "prepared"
    assert cluster.changes == {"schema": ["cluster.sql"]}
    sweep = lab.step("sweep-c4")
    assert sweep.clients == 4 and sweep.settings == {} and sweep.parent == "baseline"
    assert base.reported is not None and base.reported.value == 100
    assert async_.reported is not None and async_.reported.note == "article"
    assert lab.dataset.size_at(2.0) == 2000


def test_resolve_by_path_and_by_name(tmp_path: Path) -> None:
    folder = write_lab(tmp_path / "mine")
    assert resolve_lab(str(folder)).title == "My lab"
    assert resolve_lab("smoke").name == "smoke"
    with pytest.raises(UsageError, match="unknown lab 'nosuch'"):
        resolve_lab("nosuch")
    with pytest.raises(UsageError, match="not a lab folder"):
        resolve_lab(str(tmp_path))


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        (
            'name = "async"\n',
            'name = "async"\nclients = "x"\n',
            "step 'async': field 'clients': expected an integer",
        ),
        ('mode = "prepared"', 'mode = "turbo"', "step 'async': field 'mode': must be one of"),
        (
            'schema = ["cluster.sql"]',
            'schema = ["missing.sql"]',
            "step 'cluster': field 'schema': file 'missing.sql' not found",
        ),
        ('from = "baseline"', 'from = "nowhere"', "step 'sweep': field 'from': no earlier step"),
        (
            "reported = 100",
            'reported = 100\ncolour = "red"',
            "step 'baseline': unknown field 'colour'",
        ),
        ('mode = "prepared"', 'pgbench_args = ["--file=x"]', "field 'pgbench_args'"),
        (
            'name = "async"\n',
            'name = "async"\npooler = "odyssey"\n',
            "step 'async': field 'pooler': must be one of pgbouncer",
        ),
        (
            'name = "async"\n',
            'name = "async"\nnodes = "everywhere"\n',
            "step 'async': field 'nodes': must be one of primary, standbys, all",
        ),
        (
            'name = "async"\n',
            'name = "async"\nnodes = "all"\n',
            "step 'async': field 'nodes': 'all' needs hot standbys ([cluster] standbys = N)",
        ),
        (
            'name = "cluster"\n',
            'name = "cluster"\nprobe = "stale_reads"\n',
            "step 'cluster': field 'probe': 'stale_reads' reads on a hot standby",
        ),
        (
            'name = "async"\n',
            'name = "async"\nstandby_settings = { hot_standby_feedback = "on" }\n',
            "step 'async': field 'standby_settings': needs hot standbys",
        ),
        (
            'setup = ["setup.sql"]\n',
            'setup = ["setup.sql"]\n\n[cluster]\nstandbys = 5\n',
            "[cluster]: field 'standbys': at most 4",
        ),
        (
            'setup = ["setup.sql"]\n',
            'setup = ["setup.sql"]\n\n[metric]\nceiling = "roof"\n',
            "[metric]: field 'ceiling': no step 'roof'",
        ),
        (
            'synchronous_commit = "off"',
            'work_mem = "{ram_mb // 0}MB"',
            "step 'async': field 'settings': work_mem: {ram_mb // 0} divides by zero",
        ),
        (
            'synchronous_commit = "off"',
            'work_mem = "{ceil(ram_mb * 1e308)}kB"',
            "step 'async': field 'settings': work_mem: {ceil(ram_mb * 1e308)} overflows",
        ),
        (
            'setup = ["setup.sql"]\n',
            'setup = ["setup.sql"]\nvariables = { keys = "{rows % (scale - scale)}" }\n',
            "[dataset]: field 'variables': keys: {rows % (scale - scale)} divides by zero",
        ),
    ],
)
def test_invalid_lab_errors_name_file_step_and_field(
    tmp_path: Path, before: str, after: str, message: str
) -> None:
    assert before in MINIMAL
    folder = write_lab(tmp_path / "bad", MINIMAL.replace(before, after, 1))
    with pytest.raises(LabError) as e:
        load_lab(folder)
    assert str(folder / "lab.toml") in str(e.value)
    assert message in str(e.value)


def test_invalid_toml_is_reported(tmp_path: Path) -> None:
    folder = write_lab(tmp_path / "bad", "title = \n")
    with pytest.raises(LabError, match="invalid TOML"):
        load_lab(folder)


def test_step_selection_keeps_the_baseline(tmp_path: Path) -> None:
    lab = load_lab(write_lab(tmp_path / "mine"))
    assert [s.name for s in select_steps(lab, ["async"])] == ["baseline", "async"]
    assert [s.name for s in select_steps(lab, ["sweep"])] == ["baseline", "sweep-c1", "sweep-c4"]
    with pytest.raises(UsageError, match="no step 'nope'"):
        select_steps(lab, ["nope"])


def test_params_quick_and_overrides(tmp_path: Path) -> None:
    lab = load_lab(write_lab(tmp_path / "mine"))
    quick = resolve_params(lab, quick=True)
    full = resolve_params(lab)
    assert full.reps is None  # sequential looks unless the lab or the user fixes a count
    assert quick.reps == 3 and quick.duration_s < full.duration_s
    assert resolve_params(lab, reps=7, duration=3).reps == 7
    assert resolve_params(lab, reps="auto", quick=True).reps is None
    assert resolve_params(lab, margin=5).margin == 0.05
    with pytest.raises(UsageError, match="--reps must be positive"):
        resolve_params(lab, reps=0)
    with pytest.raises(UsageError, match="'auto'"):
        resolve_params(lab, reps="often")
    assert full.latencies == "first" and resolve_params(lab, latencies="all").latencies == "all"
    with pytest.raises(UsageError, match="--latencies takes first, all, none"):
        resolve_params(lab, latencies="some")


def test_dataset_variables_may_be_computed_and_facts_have_units(tmp_path: Path) -> None:
    toml = MINIMAL.replace(
        'setup = ["setup.sql"]', 'setup = ["setup.sql"]\nvariables = { keys = "{rows // 100}" }'
    ).replace(
        "reported = 100\n",
        'reported = 100\nfacts = { size = { sql = "select 1", unit = "MB" }, n = "select 2" }\n',
    )
    lab = load_lab(write_lab(tmp_path / "mine", toml))
    assert lab.dataset.variables == {"keys": "{rows // 100}"}
    assert [(f.name, f.unit) for f in lab.baseline.facts] == [("size", "MB"), ("n", "")]
    # the next step measures the same facts, and they are not something it changed
    assert lab.step("async").facts == lab.baseline.facts
    assert "facts" not in lab.step("async").changes
    bad = MINIMAL.replace(
        'setup = ["setup.sql"]', 'setup = ["setup.sql"]\nvariables = { k = "{x}" }'
    )
    with pytest.raises(LabError, match="field 'variables': k: unknown name 'x'"):
        load_lab(write_lab(tmp_path / "bad", bad))


FIGURES = [
    (  # a divisor of 0 with 2 GB of memory only
        ('synchronous_commit = "off"', 'work_mem = "{4096 // (ram_mb - 2048)}MB"'),
        ["--ram", "2GB"],
        "step 'async': field 'settings': work_mem: {4096 // (ram_mb - 2048)} divides by zero "
        "where ram_mb = 2048",
    ),
    (  # at --scale 2 only
        (
            'setup = ["setup.sql"]\n',
            'setup = ["setup.sql"]\nvariables = { k = "{rows // (scale - 2)}" }\n',
        ),
        ["--scale", "2"],
        "[dataset]: field 'variables': k: {rows // (scale - 2)} divides by zero "
        "where rows = 2000, scale = 2",
    ),
]


@pytest.mark.parametrize(("change", "figures", "says"), FIGURES)
@pytest.mark.parametrize("run", [["--dry-run"], ["--pg-bin", "/nonexistent"]])
def test_an_expression_that_fails_for_this_run_is_one_line_before_any_server(
    tmp_path: Path,
    change: tuple[str, str],
    figures: list[str],
    says: str,
    run: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The lab loads (its expression fails for some figures only) and with the run's
    figures is the lab's error before a server is looked for (no binaries at
    /nonexistent: that error would come first otherwise)."""
    folder = write_lab(tmp_path / "mine", MINIMAL.replace(*change))
    load_lab(folder)
    assert main(["lab", "run", str(folder), "--steps", "async", *figures, *run]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"pgopt: error: lab 'mine': {says}"


PHASED = """
title = "Phased"

[dataset]
variable = "rows"
size = 1000
setup = ["setup.sql"]

[metric]
name = "total"
source = "phases"

[[steps]]
name = "baseline"
phases = [
  { name = "reset", sql = "setup.sql", timed = false },
  { name = "work", sql = "bench.sql" },
]
reported = { value = 12, phases = { work = 12 } }
"""


def test_untimed_phases_must_come_before_the_timed_ones(tmp_path: Path) -> None:
    lab = load_lab(write_lab(tmp_path / "ok", PHASED))
    assert [(p.name, p.timed) for p in lab.steps[0].phases] == [("reset", False), ("work", True)]
    assert lab.steps[0].reported is not None and lab.steps[0].reported.phases == {"work": 12}
    with pytest.raises(LabError, match="field 'reset': not a timed phase of this step"):
        load_lab(write_lab(tmp_path / "untimed", PHASED.replace("{ work = 12 }", "{ reset = 1 }")))
    reset = '{ name = "reset", sql = "setup.sql", timed = false },'
    work = '{ name = "work", sql = "bench.sql" },'
    swapped = PHASED.replace(f"{reset}\n  {work}", f"{work}\n  {reset}")
    assert swapped != PHASED
    with pytest.raises(LabError, match="phase 2: field 'timed': untimed phases prepare a run"):
        load_lab(write_lab(tmp_path / "bad", swapped))


def test_a_generated_lab_is_checked_like_a_file(tmp_path: Path) -> None:
    folder = write_lab(tmp_path / "gen")
    raw = tomllib.loads((folder / "lab.toml").read_text())
    lab = lab_from_dict(raw, folder, where="ab.toml: [a]", name="ab")
    assert lab.name == "ab" and [s.name for s in lab.steps] == [
        s.name for s in load_lab(folder).steps
    ]
    raw["steps"][1]["clients"] = "many"
    with pytest.raises(LabError, match=r"ab\.toml: \[a\]: step 'async': field 'clients'"):
        lab_from_dict(raw, folder, where="ab.toml: [a]")


def test_baseline_starts_a_family_and_a_probe_gives_its_unit_and_headline() -> None:
    replicas = next(lab for lab in builtin_labs() if lab.name == "replicas")
    starts = [s.name for s in replicas.steps if s.baseline]
    assert starts == ["writes", "read_your_writes", "standby_conflicts"]
    assert not replicas.step("sync_remote_write").baseline  # not inherited
    pairs = replicas.step("read_your_writes")
    assert pairs.unit == "pairs/s" and pairs.headline == ("stale reads, %",)
    assert replicas.step("writes").unit is None  # pgbench's: the lab metric's unit
    assert "baseline" not in replicas.step("writes").changes
