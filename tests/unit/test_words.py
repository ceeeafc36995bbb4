"""Counts and durations read as English everywhere: no '1 minutes', no '1 comparisons'."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pgopt.cli import main
from pgopt.errors import LabError
from pgopt.words import format_duration, plural

GOLDEN = Path(__file__).parent.parent / "golden"
ONE_PLURAL = re.compile(
    r"(?<![\d.,])\b1 (runs|rounds|comparisons|minutes|steps|seconds|settings|findings|clients"
    r"|statements|rules|rows|calls|segments|looks|samples|transactions|days)\b"
)


def test_plural_and_durations() -> None:
    assert [plural(1, "run"), plural(3, "run"), plural(1024, "index")] == [
        "1 run",
        "3 runs",
        "1,024 indexes",
    ]
    assert [format_duration(s) for s in (0.2, 40, 89, 90, 60 * 59.6, 6300)] == [
        "1 s",
        "40 s",
        "89 s",
        "2 minutes",
        "60 minutes",
        "1 h 45 min",
    ]
    assert format_duration(100) == "2 minutes" and format_duration(61 * 60) == "61 minutes"


@pytest.mark.parametrize("path", sorted(GOLDEN.rglob("*.*")), ids=lambda p: p.name)
def test_no_golden_output_says_one_of_a_plural(path: Path) -> None:
    found = ONE_PLURAL.findall(path.read_text())
    assert not found, f"{path.name}: '1 {found[0]}'"


def test_runs_dir_that_is_a_file_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    assert main(["runs", "--dir", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_an_ab_folder_without_ab_toml_names_the_folders_that_have_one(tmp_path: Path) -> None:
    from pgopt.ab.spec import AbFlags, read_spec

    (tmp_path / "orders").mkdir()
    (tmp_path / "orders" / "ab.toml").write_text("")
    with pytest.raises(LabError, match=r"no ab.toml in this folder \(one is in .*orders\)"):
        read_spec(tmp_path, AbFlags(), tmp_path)
