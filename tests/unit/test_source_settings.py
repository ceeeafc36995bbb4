"""The source's settings carried to the throwaway server (pure): what shapes how its
statements run, as ALTER SYSTEM takes it back; not what belongs to its machine, its
logging or its connections; shared_buffers held to this machine."""

from pgopt.source.settings import SettingRow, carried

GIB = 2**30
# rows as PostgreSQL 15's pg_settings gives them (name, reset_val, boot_val, unit,
# category, vartype)
ROWS = [
    SettingRow("work_mem", "65536", "4096", "kB", "Resource Usage / Memory", "integer"),
    SettingRow("shared_buffers", "262144", "16384", "8kB", "Resource Usage / Memory", "integer"),
    SettingRow("max_stack_depth", "2048", "100", "kB", "Resource Usage / Memory", "integer"),
    SettingRow(
        "random_page_cost", "1.1", "4", None, "Query Tuning / Planner Cost Constants", "real"
    ),
    SettingRow(
        "enable_seqscan", "on", "on", None, "Query Tuning / Planner Method Configuration", "bool"
    ),
    SettingRow("jit", "off", "on", None, "Query Tuning / Other Planner Options", "bool"),
    SettingRow("synchronous_commit", "off", "on", None, "Write-Ahead Log / Settings", "enum"),
    SettingRow("wal_level", "logical", "replica", None, "Write-Ahead Log / Settings", "enum"),
    SettingRow("wal_buffers", "512", "-1", "8kB", "Write-Ahead Log / Settings", "integer"),
    SettingRow("max_wal_size", "4096", "1024", "MB", "Write-Ahead Log / Checkpoints", "integer"),
    SettingRow("checkpoint_timeout", "900", "300", "s", "Write-Ahead Log / Checkpoints", "integer"),
    SettingRow("autovacuum", "off", "on", None, "Autovacuum", "bool"),
    SettingRow("autovacuum_naptime", "30", "60", "s", "Vacuuming / Automatic Vacuuming", "integer"),
    SettingRow("huge_pages", "on", "try", None, "Resource Usage / Memory", "enum"),
    SettingRow(
        "default_transaction_isolation",
        "repeatable read",
        "read committed",
        None,
        "Client Connection Defaults / Statement Behavior",
        "enum",
    ),
    SettingRow(
        "statement_timeout",
        "30000",
        "0",
        "ms",
        "Client Connection Defaults / Statement Behavior",
        "integer",
    ),
    SettingRow(
        "max_connections",
        "500",
        "100",
        None,
        "Connections and Authentication / Connection Settings",
        "integer",
    ),
    SettingRow(
        "log_min_duration_statement",
        "250",
        "-1",
        "ms",
        "Reporting and Logging / When to Log",
        "integer",
    ),
    SettingRow("pg_stat_statements.max", "10000", "5000", None, "Customized Options", "integer"),
]
KNOWN = frozenset(r.name for r in ROWS)


def test_what_shapes_how_statements_run_is_carried_with_its_unit() -> None:
    got = carried(ROWS, KNOWN, 64 * GIB)
    assert got.values == {
        "autovacuum": "off",
        "autovacuum_naptime": "30s",
        "checkpoint_timeout": "900s",
        "default_transaction_isolation": "repeatable read",
        "jit": "off",
        "max_wal_size": "4GB",
        "random_page_cost": "1.1",
        "shared_buffers": "2GB",
        "synchronous_commit": "off",
        "wal_buffers": "4MB",
        "work_mem": "64MB",
    }
    assert got.notes == ()
    line = got.describe()
    assert line.startswith("A and B start from the source's 11 settings")
    assert "autovacuum=off" in line and "and 5 more" in line


def test_the_machine_the_logging_and_the_connections_stay_pgopts() -> None:
    values = carried(ROWS, KNOWN, 64 * GIB).values
    for name in (
        "max_stack_depth",  # the source's machine
        "huge_pages",  # would stop the server starting here
        "wal_level",
        "statement_timeout",  # would cut pgopt's own template builds short
        "max_connections",
        "log_min_duration_statement",
        "pg_stat_statements.max",  # a library's
        "enable_seqscan",  # the built-in value: nothing to carry
    ):
        assert name not in values, name


def test_shared_buffers_is_held_to_a_quarter_of_this_machine() -> None:
    got = carried(ROWS, KNOWN, 4 * GIB)
    assert got.values["shared_buffers"] == "1GB"
    assert got.notes == (
        "shared_buffers held to 1GB (a quarter of this machine's memory); the source's is 2GB",
    )


def test_a_setting_this_version_lacks_is_left_out_and_said() -> None:
    got = carried(ROWS, KNOWN - {"autovacuum_naptime"}, 64 * GIB)
    assert "autovacuum_naptime" not in got.values
    assert got.notes == ("autovacuum_naptime = 30s left out: this PostgreSQL has no such setting",)


def test_a_source_on_defaults_carries_nothing() -> None:
    defaults = [r for r in ROWS if r.name == "enable_seqscan"]
    got = carried(defaults, KNOWN, 64 * GIB)
    assert got.values == {} and "A runs on defaults" in got.describe()


def test_a_shared_buffers_in_kilobytes_is_read_back_whole() -> None:
    # 21 blocks of 8kB, 168kB, on a machine of 512kB: held to 128kB
    rows = [
        SettingRow("shared_buffers", "21", "16384", "8kB", "Resource Usage / Memory", "integer")
    ]
    got = carried(rows, KNOWN, 512 * 2**10)
    assert got.values == {"shared_buffers": "128kB"}
    assert "the source's is 168kB" in got.notes[0]
