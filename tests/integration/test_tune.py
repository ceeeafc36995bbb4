"""`pgopt tune` on real servers: a configuration derived for this machine, its disk
probed, held to the server's own pg_settings (the embedded PostgreSQL 18 and the
machine's PostgreSQL 15, on this machine by its address and its data directory),
`--measure` running every profile and an ablation, and `--dry-run` starting nothing."""

import json
import subprocess
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import psycopg
import pytest

from pgopt.cli import main
from pgopt.servers.embedded import default_workdir_base

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
    assert main(["tune", "--format", "json"]) == 0
    out, said = capsys.readouterr()
    doc = json.loads(out)
    jsonschema.validate(doc, schema("tune-1.json"))
    # each step says how long it takes before it starts
    assert said.splitlines()[:2] == [
        "[tune] reading the settings of a throwaway server (initdb, start, read, stop): about 3 s",
        f"[tune] probing the disk in {default_workdir_base()} (pg_test_fsync, random and "
        "sequential reads): about 8 s; --storage ssd|nvme|hdd skips it",
    ]
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
    # a throwaway server's max_connections and data answer nothing: pgtune's defaults
    assert by_name["max_connections"] == "200"  # web's
    sources = doc["inputs"]["sources"]
    assert sources["db_size"].startswith("not known") and sources["ram"] == "--ram"
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
    assert doc["inputs"]["version"] == 15 and doc["inputs"]["linux"] == 1
    sources = doc["inputs"]["sources"]
    # 127.0.0.1, and its data directory visible here: this machine's memory, CPUs, disk
    assert sources["server"].startswith("--dsn, on this machine (127.0.0.1 is a loopback")
    assert "and its data directory /" in sources["server"]
    assert sources["ram"].endswith("; the server is on this machine")
    assert sources["storage"].startswith("measured in ")
    assert "the disk of its data directory" in sources["storage"]
    assert sources["connections"] == "the server's max_connections"
    names = {s["name"] for s in doc["settings"]} | {r["name"] for r in doc["left_out"]}
    assert "io_method" not in names  # pgtune sets it from PostgreSQL 18 only
    assert "wal_compression" in names
    with psycopg.connect(LOCAL_DSN) as conn:
        after = conn.execute("select name, setting from pg_settings order by 1").fetchall()
    assert [r for r in after if r[0] != "application_name"] == [
        r for r in before if r[0] != "application_name"
    ]


@pytest.mark.xdist_group("pg15")
def test_a_dry_run_of_measure_on_postgresql_15_plans_what_its_settings_allow(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The profiles held to the server of --dsn (read-only), not to the embedded
    PostgreSQL 18's settings: no io_method on 15, nothing that needs a restart."""
    if not local_server_answers():
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    args = ["tune", "--measure", "--dsn", LOCAL_DSN, "--allow-settings", "--dry-run"]
    assert main([*args, "--storage", "ssd", "--reps", "2"]) == 0
    captured = capsys.readouterr()
    assert "io_method" not in captured.out + captured.err
    assert "left out on --dsn (restart): " in captured.err and "shared_buffers" in captured.err
    assert "round 1:" in captured.out


def test_measure_runs_every_profile_then_the_ablation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One round decides nothing: no winner, so the ablation runs from the profile named
    (the plumbing of both labs and of the files; tests/unit/test_tune_choice.py decides
    the winner from verdicts)."""
    out = tmp_path / "tune"
    args = ["--measure", "--quick", "--workload", "select", "--duration", "1", "--reps", "1"]
    args += ["--warmup", "0", "--ablate-from", "pgtune"]  # 15 runs: plumbing, no warm-up
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


def test_a_dry_run_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No server, no probe: nothing appears in the work folder, and the only programs run
    are asked their version or their settings' descriptions (postgres --describe-config
    starts no server)."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("PGOPT_WORKDIR", str(work))
    ran: list[list[str]] = []
    real = subprocess.Popen

    class Recorded(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            ran.append([str(a) for a in args])
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    assert main(["tune", "--dry-run"]) == 0
    plan = " ".join(capsys.readouterr().out.split())  # as the console wrapped it
    assert f"probe the disk in {work}" in plan and "A dry run starts nothing" in plan
    args = ["tune", "--measure", "--workload", "select", "--reps", "1", "--dry-run"]
    assert main(args) == 0
    assert "segment 1: defaults, pgtune, pgopt" in capsys.readouterr().out
    assert list(work.iterdir()) == []
    assert ran and all(a[1:] in (["--version"], ["--describe-config"]) for a in ran), ran
