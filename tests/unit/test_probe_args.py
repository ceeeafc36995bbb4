"""A probe's `probe_args` are declared with it (their types, defaults and bounds) and
checked when the lab loads: a misspelt key, a string where a number belongs, a
number out of bounds or a missing required argument is one line naming the step,
the probe and the key (exit 2, `--dry-run` included), never a failure mid-run."""

from collections.abc import Mapping
from pathlib import Path

import pytest

from pgopt import probes
from pgopt.cli import main
from pgopt.errors import LabError
from pgopt.lab import load_lab

# what each probe takes, and the values a step that gives only the required ones runs with
DECLARED = {
    "redis_incr": ({}, {}),
    "redis_incr_pipelined": ({}, {"batch": 1000}),
    "nextval": ({"sequence": "s"}, {"sequence": "s"}),
    "nextval_batch": ({"sequence": "s"}, {"sequence": "s", "batch": 1000}),
    "insert_rows": ({}, {"rows_per_commit": 1000}),
    "insert_multirow": ({}, {"rows_per_commit": 1000}),
    "copy_rows": ({}, {"rows_per_commit": 1000}),
    "stale_reads": ({}, {}),
    "standby_queries": ({}, {"hold_ms": 200, "rows": 10_000, "churn_pause_ms": 500}),
}


def read(name: str, given: Mapping[str, object]) -> dict[str, object]:
    return dict(probes.read_args(name, probes.get(name), given))


def test_every_probe_declares_its_arguments_and_their_defaults() -> None:
    assert set(DECLARED) == set(probes.registry())
    for name, (required, runs_with) in DECLARED.items():
        assert read(name, required) == runs_with, name


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_each_probe_refuses_an_unknown_a_misspelt_and_a_wrongly_typed_argument(
    name: str,
) -> None:
    required, _ = DECLARED[name]
    with pytest.raises(LabError, match=f"probe '{name}' takes no argument 'colour'"):
        read(name, {**required, "colour": 1})
    for key, arg in probes.get(name).args.items():
        misspelt = key[:-1]
        with pytest.raises(
            LabError, match=f"takes no argument '{misspelt}' \\(did you mean '{key}'"
        ):
            read(name, {**required, misspelt: arg.default})
        wrong = 1000 if arg.kind is str else "1000"
        with pytest.raises(LabError, match=f"probe '{name}': '{key}': expected .*, got {wrong!r}"):
            read(name, {**required, key: wrong})
        with pytest.raises(LabError, match="expected"):
            read(name, {**required, key: True})  # TOML's true is no number


def test_the_bounds_and_the_required_arguments() -> None:
    with pytest.raises(LabError, match="probe 'nextval' needs 'sequence' \\(a string\\)"):
        read("nextval", {})
    with pytest.raises(LabError, match="'batch': must be at least 1, got 0"):
        read("redis_incr_pipelined", {"batch": 0})
    with pytest.raises(LabError, match=r"'batch': expected an integer, got 10\.5"):
        read("nextval_batch", {"sequence": "s", "batch": 10.5})
    # one INSERT's parameters are counted in 16 bits: 4 a row, so 16,383 rows at most
    assert read("insert_multirow", {"rows_per_commit": 16_383}) == {"rows_per_commit": 16_383}
    with pytest.raises(LabError, match="'rows_per_commit': must be at most 16383, got 20000"):
        read("insert_multirow", {"rows_per_commit": 20_000})
    assert read("copy_rows", {"rows_per_commit": 20_000}) == {"rows_per_commit": 20_000}
    # a number where one may have a fraction: kept as written
    assert read("standby_queries", {"hold_ms": 2.5})["hold_ms"] == 2.5
    with pytest.raises(LabError, match="'churn_pause_ms': must be at least 0, got -1"):
        read("standby_queries", {"churn_pause_ms": -1})


def write_lab(folder: Path, args: str, timed_by: str = 'probe = "nextval_batch"') -> Path:
    folder.mkdir()
    step = f'name = "batched"\n{timed_by}\nprobe_args = {args}\n'
    (folder / "lab.toml").write_text(f'title = "Probed"\n\n[[steps]]\n{step}')
    return folder


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            '{ sequence = "s", bach = 10 }',
            "probe 'nextval_batch' takes no argument 'bach' (did you mean 'batch'?)",
        ),
        (
            '{ sequence = "s", batch = "10" }',
            "probe 'nextval_batch': 'batch': expected an integer, got '10'",
        ),
        ("{ batch = 10 }", "probe 'nextval_batch' needs 'sequence' (a string)"),
    ],
)
def test_a_steps_probe_args_are_checked_when_the_lab_loads(
    tmp_path: Path, args: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_lab(tmp_path / "probed", args)
    with pytest.raises(LabError) as e:
        load_lab(folder)
    message = f"{folder / 'lab.toml'}: step 'batched': field 'probe_args': {says}"
    assert str(e.value) == message
    assert main(["lab", "run", str(folder), "--dry-run"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"pgopt: error: {message}"


def test_probe_args_without_a_probe_are_refused(tmp_path: Path) -> None:
    pgbench = 'scripts = [{ builtin = "select-only" }]'
    folder = write_lab(tmp_path / "unprobed", "{ batch = 10 }", pgbench)
    with pytest.raises(LabError, match="step 'batched': field 'probe_args': goes with a probe"):
        load_lab(folder)
