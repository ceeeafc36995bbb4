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
        ("{min(ram_mb)}MB", "unsupported expression 'min"),
        ("{ceil(ram_mb, 2)}MB", "unsupported expression 'ceil"),
        ("{" + "-" * 5000 + "1}", "is nested too deeply"),
    ],
)
def test_anything_else_is_refused(value: str, message: str) -> None:
    with pytest.raises(LabError, match=message):
        expressions.check(value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{ram_mb // 0}MB", "{ram_mb // 0} divides by zero"),
        ("{cpus % (cpus - cpus)}", "{cpus % (cpus - cpus)} divides by zero"),
        ("{1e308 * 10}MB", "{1e308 * 10} overflows"),
        ("{ceil(1e308 * ram_mb)}MB", "{ceil(1e308 * ram_mb)} overflows"),
        ("{1e400}", "{1e400} overflows"),  # read as inf
        ("{1e308 * 10 - 1e308 * 10}", "overflows"),  # NaN
        ("{" + "9" * 400 + "}kB", "{99999999999999999999"),  # too large for a float
        ("{max(1, 1e308 * 10) > 5}", "overflows"),  # inf on the way counts too
    ],
)
def test_arithmetic_that_fails_for_any_figures_is_refused_at_load(value: str, message: str) -> None:
    with pytest.raises(expressions.FigureError) as e:
        expressions.check(value)
    assert message in str(e.value)
    assert len(str(e.value)) < 200  # a long expression is shortened


def test_arithmetic_that_fails_on_one_machine_is_refused_there_with_its_figures() -> None:
    machine_dependent = {"work_mem": "{ram_mb // (cpus - 2)}MB", "x": "{ram_mb % (cpus - 1024)}"}
    for value in machine_dependent.values():
        expressions.check(value)  # its divisor 0 on some machines only
    with pytest.raises(expressions.FigureError) as e:
        expressions.resolve(machine_dependent, {"ram_mb": 16384.0, "cpus": 2.0})
    assert str(e.value) == (
        "work_mem: {ram_mb // (cpus - 2)} divides by zero where cpus = 2, ram_mb = 16384"
    )


def test_inf_and_nan_never_become_a_value() -> None:
    """With decimals, inf read 'inf' and NaN 'nan': a tuning profile's setting."""
    for value in ("{ram_mb * 1e308}", "{ram_mb * 1e308 - ram_mb * 1e308}"):
        with pytest.raises(expressions.FigureError, match=r"overflows \(.*\) where ram_mb = 8192$"):
            expressions.expand(value, {"ram_mb": 8192.0}, decimals=2)


def test_parse_size() -> None:
    assert parse_size("8GB") == 8 * 2**30
    assert parse_size("512mb") == 512 * 2**20
    assert parse_size("1.5G") == int(1.5 * 2**30)
    with pytest.raises(UsageError, match="--ram"):
        parse_size("lots")
