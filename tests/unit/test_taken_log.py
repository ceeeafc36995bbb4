"""The pure parts of a log capture pgopt takes of the source (source/taken_log.py):
the share of transactions logged, the log file read, the settings the window
changes and the SQL that would put them back by hand."""

from __future__ import annotations

import pytest

from pgopt.source.taken_log import (
    TARGET_STATEMENTS,
    destination_of,
    sample_rate,
    settings_for_window,
    undo_sql,
)


@pytest.mark.parametrize(
    ("per_s", "seconds", "rate"),
    [
        (0, 10, 1.0),  # a quiet source: everything it runs
        (1_000, 10, 1.0),  # 10,000 statements: within the target
        (20_000, 10, 0.1),  # sysbench on two cores: a tenth
        (10**7, 10, 0.001),  # the floor
    ],
)
def test_the_share_logged_keeps_the_log_near_its_target(
    per_s: float, seconds: float, rate: float
) -> None:
    assert sample_rate(per_s, seconds) == rate
    if rate > 0.001:
        assert sample_rate(per_s, seconds) * per_s * seconds <= TARGET_STATEMENTS * 1.01


def test_the_log_read_is_csvlog_then_jsonlog_then_stderr() -> None:
    assert destination_of("stderr, csvlog") == "csvlog"
    assert destination_of("jsonlog,stderr") == "jsonlog"
    assert destination_of("stderr") == "stderr"
    assert destination_of("syslog") is None
    assert destination_of("eventlog, syslog") is None


def test_the_window_sets_the_share_and_the_values_length_only_where_it_is_zero() -> None:
    assert settings_for_window(0.25, "-1") == {"log_transaction_sample_rate": "0.25"}
    assert settings_for_window(1.0, None) == {"log_transaction_sample_rate": "1"}
    assert settings_for_window(0.5, "0") == {
        "log_transaction_sample_rate": "0.5",
        "log_parameter_max_length": "-1",
    }


def test_the_undo_puts_back_what_postgresql_auto_conf_held_and_resets_the_rest() -> None:
    changes = settings_for_window(0.5, "0")
    kept = {"log_parameter_max_length": "0"}
    assert undo_sql(changes, kept) == (
        "ALTER SYSTEM RESET log_transaction_sample_rate; "
        "ALTER SYSTEM SET log_parameter_max_length = '0'; SELECT pg_reload_conf()"
    )
    assert "'it''s'" in undo_sql({"x": "1"}, {"x": "it's"})
