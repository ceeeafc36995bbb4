"""The variables a lab's SQL and pgbench scripts see."""

from pathlib import Path

from pgopt.engine.context import dataset_variables
from pgopt.lab import load_lab

from .test_lab_load import write_lab

LAB = """
title = "two branches at scale 1"
[dataset]
variable = "scale_factor"
size = 2
min = 1
variables = { keys = "{scale_factor * 10}", quadruple = "{scale * 4}" }
setup = ["setup.sql"]
[[steps]]
name = "baseline"
scripts = [{ builtin = "tpcb-like" }]
"""


def test_the_size_variable_and_computed_ones_follow_the_scale(tmp_path: Path) -> None:
    lab = load_lab(write_lab(tmp_path / "lab", LAB))
    assert dataset_variables(lab, 1.0) == {"scale_factor": "2", "keys": "20", "quadruple": "4"}
    assert dataset_variables(lab, 3.0) == {"scale_factor": "6", "keys": "60", "quadruple": "12"}


def test_scale_is_left_to_pgbench(tmp_path: Path) -> None:
    # pgbench's built-in scripts take :scale as the number of branches; defining it
    # as pgopt's scale factor (1) beside 2 branches put every transaction on branch 1
    lab = load_lab(write_lab(tmp_path / "lab", LAB))
    assert "scale" not in dataset_variables(lab, 1.0)
