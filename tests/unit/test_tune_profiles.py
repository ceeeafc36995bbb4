"""Tuning profiles are pure formulas: checked against values computed by hand, pgtune's
for the same inputs included (research b11, b15: 16 GiB, 8 CPUs, 100 connections,
SSD, Linux, PostgreSQL 18, web)."""

from dataclasses import replace
from typing import Any

import pytest

from pgopt.errors import LabError
from pgopt.servers.setting_units import in_unit
from pgopt.tune.profile import Derived, Inputs, derive, profiles, read_profile
from pgopt.tune.safety import fitting_work_mem, memory_check
from pgopt.tune.settings_check import check

B15 = Inputs(
    ram_mb=16384,
    cpus=8,
    connections=100,
    version=18,
    db_mb=16384,  # "mid": within 20% of RAM, pgtune's neutral case
    storage="ssd",
    db_type="web",
    disk_free_mb=200_000,
    read_us=120.0,
    seq_page_us=40.0,
    read_gain=6.0,
    fsync_us=900.0,
    connections_known=True,
    db_known=True,
)


def settings(profile: str, inputs: Inputs) -> dict[str, str]:
    return {d.name: d.value for d in derive(profiles()[profile], inputs)}


def test_pgtune_web_on_the_research_machine() -> None:
    s = settings("pgtune", B15)
    assert s["shared_buffers"] == f"{16384 * 1024 // 4}kB"  # 4 GB
    assert s["effective_cache_size"] == f"{16384 * 1024 * 3 // 4}kB"  # 12 GB
    assert s["maintenance_work_mem"] == f"{16384 * 1024 // 16}kB"  # 1 GB
    # (16 GiB - 4 GiB) / ((100 + 8 workers) x 3) = 38,836 kB: the 37.9 MB of research b15
    assert s["work_mem"] == "38836kB"
    assert s["wal_buffers"] == "16384kB"  # 3% of 4 GB is above 14 MB: 16 MB
    assert (s["min_wal_size"], s["max_wal_size"]) == ("1024MB", "4096MB")
    assert s["max_parallel_workers_per_gather"] == "4"  # ceil(8 / 2), at most 4
    assert (s["max_worker_processes"], s["max_parallel_workers"]) == ("8", "8")
    assert s["max_parallel_maintenance_workers"] == "4"
    assert (s["random_page_cost"], s["effective_io_concurrency"]) == ("1.1", "200")
    assert (s["huge_pages"], s["jit"], s["wal_compression"]) == ("try", "off", "lz4")
    assert s["io_method"] == "io_uring" and "autovacuum_max_workers" not in s
    assert s["checkpoint_completion_target"] == "0.9"


def test_pgtune_on_two_cpus_a_small_warehouse_on_an_hdd() -> None:
    small = replace(B15, ram_mb=2048, cpus=2, db_mb=100_000, storage="hdd", db_type="dw")
    s = settings("pgtune", small)
    assert s["shared_buffers"] == "524288kB"
    # 3% of 512 MB = 15,728 kB, above 14 MB: 16 MB
    assert s["wal_buffers"] == "16384kB"
    # (2 GiB - 512 MiB) / ((100 + 8) x 3) / 2 (dw) x 0.9 (larger than RAM) = 2,184 kB -> 4 MB
    assert s["work_mem"] == "4096kB"
    assert s["maintenance_work_mem"] == f"{2048 * 1024 // 8}kB"
    assert (s["random_page_cost"], s["effective_io_concurrency"]) == ("4", "2")
    assert s["default_statistics_target"] == "500" and s["max_wal_size"] == "16384MB"
    assert "max_worker_processes" not in s and "jit" not in s
    assert s["huge_pages"] == "off"


def test_pgopt_on_this_kind_of_machine() -> None:
    two = replace(B15, ram_mb=24104, cpus=2, read_us=150.0, seq_page_us=50.0, read_gain=1.2)
    s = settings("pgopt", two)
    assert s["shared_buffers"] == f"{24104 // 4}MB"
    assert s["effective_cache_size"] == f"{24104 - 24104 // 4}MB"
    # (90% of 24,682,496 kB - 6,170,624 shared - 65,536 WAL - 4 x 1,542,656 maintenance)
    # / (100 x 3) = 32,691 kB, floored to whole MB: 31 MB
    assert s["work_mem"] == "31MB"
    assert s["maintenance_work_mem"] == f"{24104 * 1024 // 16 // 1024}MB"
    assert s["max_wal_size"] == "49152MB"  # a quarter of 200,000 MB, in whole GB
    assert s["min_wal_size"] == "12288MB"  # a quarter of it, kept for recycling
    # 150 / 50 = 3x from the disk; the database fits in memory: 1 + (3 - 1) x 0.1
    assert s["random_page_cost"] == "1.2"
    assert s["effective_io_concurrency"] == "1"  # no gain from a deeper queue
    assert s["wal_buffers"] == "64MB" and "max_parallel_workers_per_gather" not in s
    reasons = {d.name: d.reason for d in derive(profiles()["pgopt"], two)}
    assert "150 µs against 50 µs" in reasons["random_page_cost"]
    big = settings("pgopt", replace(two, db_mb=200_000))  # 9% fits: 1 + 2 x 0.91, floored
    assert big["random_page_cost"] == "2.8"


def test_pgopt_memory_stays_within_a_small_container() -> None:
    s = settings("pgopt", replace(B15, ram_mb=1024, disk_free_mb=10_000))
    assert s["shared_buffers"] == "256MB" and s["work_mem"] == "4MB"
    assert s["max_wal_size"] == "4096MB" and "wal_buffers" not in s
    assert s["min_wal_size"] == "1024MB"


def test_a_profile_with_an_unknown_name_says_where() -> None:
    bad = read_profile(
        "x",
        'title="t"\ndescription="d"\nsource="s"\n[[setting]]\nname="a"\n'
        'value="{ram_gb}MB"\nreason="r"\n',
        "x.toml",
    )
    with pytest.raises(LabError, match="unknown name 'ram_gb'"):
        derive(bad, B15)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("{ram_mb // (cpus - 8)}MB", "x: a: {ram_mb // (cpus - 8)} divides by zero where cpus = 8"),
        ("{read_us * 1e308}", "x: a: {read_us * 1e308} overflows"),  # 'inf' before
    ],
)
def test_a_profile_whose_arithmetic_fails_for_these_inputs_says_where(
    value: str, says: str
) -> None:
    bad = read_profile(
        "x",
        f'title="t"\ndescription="d"\nsource="s"\n[[setting]]\nname="a"\n'
        f'value="{value}"\nreason="r"\n',
        "x.toml",
    )
    with pytest.raises(LabError) as e:
        derive(bad, B15)
    assert str(e.value).startswith(says), e.value


# pg_settings rows of the embedded PostgreSQL 18.6 (a build without io_uring and lz4)
PG_SETTINGS = {
    row[0]: dict(
        zip(
            ("name", "unit", "vartype", "min_val", "max_val", "enumvals", "context", "boot_val"),
            row,
            strict=True,
        )
    )
    for row in [
        ("checkpoint_timeout", "s", "integer", "30", "86400", None, "sighup", "300"),
        ("huge_pages", None, "enum", None, None, ["off", "on", "try"], "postmaster", "try"),
        ("io_method", None, "enum", None, None, ["sync", "worker"], "postmaster", "worker"),
        ("jit", None, "bool", None, None, None, "user", "on"),
        ("max_wal_size", "MB", "integer", "2", "2147483647", None, "sighup", "1024"),
        ("random_page_cost", None, "real", "0", "1.79769e+308", None, "user", "4"),
        ("shared_buffers", "8kB", "integer", "16", "1073741823", None, "postmaster", "16384"),
        ("wal_buffers", "8kB", "integer", "-1", "262143", None, "postmaster", "-1"),
        ("wal_compression", None, "enum", None, None, ["pglz", "on", "off"], "superuser", "off"),
        ("work_mem", "kB", "integer", "64", "2147483647", None, "user", "4096"),
    ]
}


def test_values_are_held_to_the_servers_own_bounds_and_choices() -> None:
    derived = [
        Derived("shared_buffers", "4194304kB", "r"),
        Derived("work_mem", "32kB", "r"),  # below the minimum of 64 kB
        Derived("wal_buffers", "4GB", "r"),  # above 262,143 pages of 8 kB
        Derived("checkpoint_timeout", "15min", "r"),
        Derived("io_method", "io_uring", "r"),
        Derived("wal_compression", "lz4", "r"),
        Derived("jit", "off", "r"),
        Derived("random_page_cost", "1.1", "r"),
        Derived("io_workers", "3", "r"),  # not a setting of this server (stand-in rows)
    ]
    accepted, refused = check(derived, PG_SETTINGS)
    by_name = {c.name: c for c in accepted}
    assert by_name["shared_buffers"].value == "4194304kB" and by_name["shared_buffers"].restart
    assert by_name["shared_buffers"].default == "128MB"  # 16,384 pages of 8 kB
    assert by_name["wal_buffers"].default == "-1" and not by_name["jit"].is_default
    assert by_name["work_mem"].value == "64kB" and "minimum" in by_name["work_mem"].note
    assert by_name["wal_buffers"].value == "262143" and "maximum" in by_name["wal_buffers"].note
    assert (
        by_name["checkpoint_timeout"].value == "15min" and not by_name["checkpoint_timeout"].restart
    )
    assert by_name["checkpoint_timeout"].default == "300s"
    same, _ = check([Derived("checkpoint_timeout", "5min", "r")], PG_SETTINGS)
    assert same[0].is_default
    assert {r.name for r in refused} == {"io_method", "wal_compression", "io_workers"}
    why = {r.name: r.why for r in refused}
    assert (
        "offers sync, worker" in why["io_method"] and "built without io_uring" in why["io_method"]
    )


@pytest.mark.parametrize(
    ("value", "unit", "number"),
    [
        ("64MB", "kB", 65536),
        ("1GB", "8kB", 131072),
        ("15min", "s", 900),
        ("200", None, 200),
        ("250ms", "s", 0.25),
        ("2GB", "MB", 2048),
        ("3x", "kB", None),
        ("5s", "kB", None),
    ],
)
def test_values_are_read_in_the_settings_unit(
    value: str, unit: str | None, number: float | None
) -> None:
    assert in_unit(value, unit) == number


def test_the_memory_check_counts_every_consumer_against_the_limit() -> None:
    rows: dict[str, Any] = {
        **PG_SETTINGS,
        "hash_mem_multiplier": {"unit": None, "boot_val": "2"},
        "maintenance_work_mem": {"unit": "kB", "boot_val": "65536"},
        "autovacuum_work_mem": {"unit": "kB", "boot_val": "-1"},
        "autovacuum_max_workers": {"unit": None, "boot_val": "3"},
    }
    settings = {"shared_buffers": "1GB", "work_mem": "16MB", "maintenance_work_mem": "256MB"}
    check_ = memory_check(settings, rows, connections=100, limit_bytes=8 * 2**30)
    parts = dict(check_.parts)
    assert parts["shared_buffers"] == 2**30
    assert parts["wal_buffers"] == 16 * 2**20  # -1: 1/32 of shared_buffers, at most 16 MB
    assert parts["100 connections x work_mem x 3"] == 100 * 16 * 2**20 * 3
    assert parts["3 autovacuum workers"] == 3 * 256 * 2**20  # -1: maintenance_work_mem
    assert check_.total == 2**30 + 16 * 2**20 + 4800 * 2**20 + 768 * 2**20 + 256 * 2**20
    assert check_.fits and "fits within 90%" in check_.describe()
    too_much = memory_check({**settings, "work_mem": "64MB"}, rows, 100, 8 * 2**30)
    assert not too_much.fits
    # 90% of 8 GiB = 7,372.8 MB, less 2,064 MB of the rest, over 100 x 3: 17 MB
    assert fitting_work_mem(too_much) == 17 * 2**20
    assert fitting_work_mem(check_) is None


@pytest.mark.parametrize("ram_gb", [4, 8, 16, 24, 64, 256])
def test_pgopts_profile_passes_its_own_memory_check(ram_gb: int) -> None:
    rows: dict[str, Any] = {
        **PG_SETTINGS,
        "hash_mem_multiplier": {"unit": None, "boot_val": "2"},
        "maintenance_work_mem": {"unit": "kB", "boot_val": "65536"},
        "autovacuum_work_mem": {"unit": "kB", "boot_val": "-1"},
        "autovacuum_max_workers": {"unit": None, "boot_val": "3"},
    }
    s = settings("pgopt", replace(B15, ram_mb=ram_gb * 1024))
    assert memory_check(s, rows, 100, ram_gb * 2**30).fits


def test_pgopt_answers_a_copy_on_write_disk_and_a_small_dev_shm() -> None:
    plain = settings("pgopt", B15)
    assert "wal_init_zero" not in plain and "dynamic_shared_memory_type" not in plain
    container = settings("pgopt", replace(B15, filesystem="btrfs", shm_mb=64))
    assert container["wal_init_zero"] == "off" and container["wal_recycle"] == "off"
    assert container["dynamic_shared_memory_type"] == "sysv"


def test_a_servers_own_configuration_is_what_the_checks_fall_back_to() -> None:
    """On a user's server (--dsn), a setting the profile leaves alone counts at the value
    the server has, not at PostgreSQL's boot value; and "back to the default" is that."""
    rows: dict[str, Any] = {
        **PG_SETTINGS,
        "hash_mem_multiplier": {"unit": None, "boot_val": "2", "setting": "2"},
        "maintenance_work_mem": {"unit": "kB", "boot_val": "65536", "setting": "262144"},
        "autovacuum_work_mem": {"unit": "kB", "boot_val": "-1", "setting": "-1"},
        "autovacuum_max_workers": {"unit": None, "boot_val": "3", "setting": "6"},
    }
    rows["shared_buffers"] = {**rows["shared_buffers"], "setting": "131072"}  # 1 GB
    parts = dict(memory_check({}, rows, 10, 8 * 2**30).parts)
    assert parts["6 autovacuum workers"] == 6 * 256 * 2**20
    assert parts["shared_buffers"] == 2**30
    (checked,), _ = check([Derived("shared_buffers", "1GB", "r")], rows)
    assert checked.default == "1GB" and checked.is_default


def test_a_value_the_server_computed_goes_back_to_being_computed() -> None:
    """wal_buffers left unset reads 4MB beside the default 128MB of shared_buffers, but
    its default is -1 (1/32 of shared_buffers): the ablation's "back to the default"
    must let the server compute it again beside the winner's shared_buffers, and a
    value a configuration file set stays as set."""
    computed = {**PG_SETTINGS["wal_buffers"], "setting": "512", "source": "default"}
    configured = {**computed, "source": "configuration file"}
    (unset,), _ = check([Derived("wal_buffers", "64MB", "r")], {"wal_buffers": computed})
    (set_,), _ = check([Derived("wal_buffers", "64MB", "r")], {"wal_buffers": configured})
    assert unset.default == "-1" and not unset.is_default
    assert set_.default == "4MB"
