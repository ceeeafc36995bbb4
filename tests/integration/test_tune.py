"""`pgopt tune` on real servers: a configuration derived for this machine, its disk
probed, held to the server's own pg_settings (the embedded PostgreSQL 18 and the
machine's PostgreSQL 15), and `--measure` running every profile and an ablation."""

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import psycopg
import pytest

from pgopt.cli import main

from .conftest import LOCAL_DSN, local_server_answers
from .test_ab import write_ab


def schema(name: str) -> dict[str, Any]:
    return json.loads((files("pgopt") / "schemas" / name).read_text())  # type: ignore[no-any-return]


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["tune", "--format", "json", *args]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, schema("tune-1.json"))
    return doc


def test_a_configuration_for_this_machine_with_its_disk_probed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = run_json(capsys)
    sources = doc["inputs"]["sources"]
    assert sources["storage"].startswith("measured in ") and "ram" in sources
    assert doc["inputs"]["read_us"] > 0 and doc["inputs"]["fsync_us"] > 0
    by_name = {s["name"]: s for s in doc["settings"]}
    assert by_name["shared_buffers"]["restart"] and not by_name["work_mem"]["restart"]
    assert "µs" in by_name["random_page_cost"]["reason"]
    assert 1.1 <= float(by_name["random_page_cost"]["value"]) <= 4


def test_pgtunes_values_the_server_cannot_take_are_left_out_with_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = run_json(capsys, "--profile", "pgtune", "--storage", "ssd", "--ram", "16GB")
    by_name = {s["name"]: s["value"] for s in doc["settings"]}
    assert by_name["shared_buffers"] == f"{16 * 1024 * 1024 // 4}kB"
    assert doc["inputs"]["sources"]["storage"].startswith("--storage")
    refused = {r["name"]: r["why"] for r in doc["left_out"]}
    # this build's io_method choices decide: io_uring taken where offered, else left out
    if "io_method" in refused:
        assert "this server offers" in refused["io_method"]
    else:
        assert by_name["io_method"] == "io_uring"
    assert main(["tune", "--profile", "pgtune", "--storage", "ssd", "--format", "sql"]) == 0
    text = capsys.readouterr().out
    assert "ALTER SYSTEM SET shared_buffers" in text and "then restart the server for" in text


@pytest.mark.xdist_group("pg15")  # compares its settings before and after
def test_the_machines_postgresql_15_by_dsn(capsys: pytest.CaptureFixture[str]) -> None:
    if not local_server_answers():
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    with psycopg.connect(LOCAL_DSN) as conn:
        before = conn.execute("select name, setting from pg_settings order by 1").fetchall()
    doc = run_json(capsys, "--dsn", LOCAL_DSN, "--profile", "pgtune")
    assert doc["inputs"]["version"] == 15
    assert doc["inputs"]["sources"]["storage"].startswith("assumed ssd")
    names = {s["name"] for s in doc["settings"]} | {r["name"] for r in doc["left_out"]}
    assert "io_method" not in names  # pgtune sets it from PostgreSQL 18 only
    assert "wal_compression" in names
    with psycopg.connect(LOCAL_DSN) as conn:
        after = conn.execute("select name, setting from pg_settings order by 1").fetchall()
    assert [r for r in after if r[0] != "application_name"] == [
        r for r in before if r[0] != "application_name"
    ]


def test_measure_runs_every_profile_then_the_ablation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One round decides nothing: no winner, so the ablation runs from the profile named
    (the plumbing of both labs and of the files; tests/unit/test_tune_choice.py decides
    the winner from verdicts)."""
    out = tmp_path / "tune"
    args = ["--measure", "--quick", "--workload", "select", "--duration", "1", "--reps", "1"]
    args += ["--ablate-from", "pgtune"]
    assert main(["tune", *args, "--storage", "ssd", "--out", str(out)]) == 0
    doc = json.loads((out / "tune.json").read_text())
    jsonschema.validate(doc, schema("tune-run-1.json"))
    compared = json.loads((out / "compare" / "result.json").read_text())
    assert [s["name"] for s in compared["steps"]] == ["defaults", "pgtune", "pgopt"]
    assert doc["winner"] is None and doc["held"] == doc["ablated_from"] == "pgtune"
    ablated = json.loads((out / "ablation" / "result.json").read_text())
    names = [s["name"] for s in ablated["steps"]]
    assert names[0] == "pgtune" and set(names[1:]) <= {
        f"without_{n}" for n in doc["profiles"]["pgtune"]
    }
    assert len(names) > 5 and len(doc["ablation"]) == len(names) - 1
    assert (out / "compare" / "report.html").is_file() and (out / "tune.conf").is_file()
    conf = (out / "tune.conf").read_text()
    assert "no profile won (pgopt against pgtune: n/a (×" in conf and "(1 round)" in conf
    assert "memory at worst" in conf
    assert "tune.conf holds pgtune's, as named" in conf
    assert "pgopt against the defaults:" in capsys.readouterr().out
    page = (out / "report.md").read_text()
    assert page.count("| without") == 0 and page.count("\n| ") == len(doc["ablation"]) + 1


def test_measure_takes_an_ab_workload_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The profiles' steps on the user's own A/B workload (its data built as `pgopt ab`
    builds it): the plan, without a run."""
    folder = write_ab(tmp_path / "ab")
    args = ["--measure", "--workload", str(folder / "ab.toml"), "--storage", "ssd", "--dry-run"]
    assert main(["tune", *args]) == 0
    plan = capsys.readouterr().out
    assert "segment 1: defaults, pgtune, pgopt" in plan
    assert main(["tune", "--measure", "--workload", "nope.toml"]) == 2
    assert "--workload nope.toml: neither batch, select, tpcb" in capsys.readouterr().err


def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "--ram", "lots"]) == 2
    assert main(["tune", "--measure", "--dsn", "postgresql://x@127.0.0.1:1/x"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines[0] == "pgopt: error: --ram 'lots': give a size such as 8GB or 512MB"
    assert lines[1] == "pgopt: error: --measure with --dsn changes settings: add --allow-settings"
