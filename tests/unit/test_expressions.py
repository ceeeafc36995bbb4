"""Settings computed from the machine: whitelisted arithmetic only."""

import pytest

from pgopt.errors import LabError, UsageError
from pgopt.lab import expressions
from pgopt.params import parse_size


def test_expand_the_articles_memory_profile() -> None:
    names = {"ram_mb": 8192.0, "cpus": 2.0}
    assert expressions.expand("{ram_mb // 4}MB", names) == "2048MB"
    assert expressions.expand("{min(ram_mb // 64, 64)}MB", names) == "64MB"
    assert expressions.expand("{ram_mb - ram_mb // 4}MB", names) == "6144MB"
    assert expressions.expand("256MB", names) == "256MB"
    assert expressions.resolve({"work_mem": "{ram_mb // 64}MB"}, names) == {"work_mem": "128MB"}


def test_settings_may_grow_with_the_dataset_scale() -> None:
    expressions.check("{max(1, 16 * scale)}GB")  # a name settings may use
    wal = "{max(1, 16 * scale)}GB"
    assert expressions.expand(wal, {"scale": 2.0}) == "32GB"
    assert expressions.expand(wal, {"scale": 0.01}) == "1GB"


def test_conditions_choose_and_comparisons_are_one_or_zero() -> None:
    names = {"cpus": 2.0, "ram_mb": 1000.0, "version": 18.0}
    assert expressions.evaluate("ceil(cpus / 4)", names) == 1
    assert expressions.evaluate("4 if cpus >= 4 else 0", names) == 0
    assert expressions.evaluate("1 <= cpus < 4 and not version < 15", names) == 1
    assert expressions.evaluate("ram_mb > 2048 or cpus == 2", names) == 1
    assert expressions.evaluate("max(-1, floor(ram_mb / 300))", names) == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{__import__('os').system('true')}MB", "unsupported expression"),
        ("{ram_gb // 4}GB", "unknown name 'ram_gb'"),
        ("{ram_mb //}MB", "invalid expression"),
    ],
)
def test_anything_else_is_refused(value: str, message: str) -> None:
    with pytest.raises(LabError, match=message):
        expressions.check(value)


def test_parse_size() -> None:
    assert parse_size("8GB") == 8 * 2**30
    assert parse_size("512mb") == 512 * 2**20
    assert parse_size("1.5G") == int(1.5 * 2**30)
    with pytest.raises(UsageError, match="--ram"):
        parse_size("lots")
