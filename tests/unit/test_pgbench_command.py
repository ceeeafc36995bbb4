"""pgbench argument lists: never a shell string, only allowed extra flags."""

from pathlib import Path

import pytest

from pgopt.errors import LabError
from pgopt.pgbench.command import PgbenchSpec, QueryMode, ScriptRef, build_args, check_extra_args


def test_build_args_for_a_timed_run() -> None:
    spec = PgbenchSpec(
        scripts=(
            ScriptRef(path=Path("/lab/login.sql"), weight=3),
            ScriptRef(builtin="select-only"),
        ),
        mode=QueryMode.PREPARED,
        clients=8,
        threads=2,
        duration_s=20,
        variables={"users": "1000"},
        log_prefix=Path("/run/raw/pgbench_log"),
    )
    args = build_args(Path("/bin/pgbench"), spec)
    assert args[0] == "/bin/pgbench"
    assert args[args.index("--protocol") + 1] == "prepared"
    assert args[args.index("--time") + 1] == "20"
    assert "--transactions" not in args
    assert args[args.index("-f") : args.index("-f") + 2] == ["-f", "/lab/login.sql@3"]
    assert args[args.index("-b") : args.index("-b") + 2] == ["-b", "select-only@1"]
    assert args[args.index("--define") : args.index("--define") + 2] == ["--define", "users=1000"]
    assert "--log-prefix=/run/raw/pgbench_log" in args


def test_threads_never_exceed_clients() -> None:
    spec = PgbenchSpec(scripts=(ScriptRef(builtin="select-only"),), clients=1, threads=4)
    args = build_args(Path("pgbench"), spec)
    assert args[args.index("--jobs") + 1] == "1"


def test_duration_or_transactions_not_both() -> None:
    with pytest.raises(LabError):
        build_args(
            Path("pgbench"),
            PgbenchSpec(scripts=(ScriptRef(builtin="select-only"),), duration_s=5, transactions=10),
        )


def test_extra_flags_are_checked() -> None:
    assert check_extra_args(["--connect", "--rate", "100"]) == ("--connect", "--rate", "100")
    assert check_extra_args(["--max-tries=3"]) == ("--max-tries=3",)
    with pytest.raises(LabError, match="not allowed"):
        check_extra_args(["--file=/etc/passwd"])
    with pytest.raises(LabError, match="needs a value"):
        check_extra_args(["--rate"])


def test_log_sampling_rate_only_below_one() -> None:
    base = PgbenchSpec(scripts=(ScriptRef(builtin="select-only"),), log_prefix=Path("/r/log"))
    assert not any(a.startswith("--sampling-rate") for a in build_args(Path("pgbench"), base))
    sampled = PgbenchSpec(scripts=base.scripts, log_prefix=base.log_prefix, log_sampling_rate=0.05)
    assert "--sampling-rate=0.05" in build_args(Path("pgbench"), sampled)
