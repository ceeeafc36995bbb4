"""Settings classification: reload or restart, unknown names, what a user's server allows."""

import pytest

from pgopt.errors import SettingsError
from pgopt.servers.settings import (
    SettingRights,
    classify_settings,
    normalize,
    refuse_for_attached,
    unsupported_reason,
)

CONTEXTS = {
    "synchronous_commit": "user",
    "shared_buffers": "postmaster",
    "bgwriter_delay": "sighup",
    "log_statement": "superuser",
    "server_version": "internal",
}


def test_normalize_lowercases_and_spells_booleans() -> None:
    assert normalize({"Synchronous_Commit": False, "work_mem": 64}) == {
        "synchronous_commit": "off",
        "work_mem": "64",
    }


def test_only_differences_are_changes() -> None:
    changes = classify_settings(
        {"synchronous_commit": "off"}, {"synchronous_commit": "off"}, CONTEXTS
    )
    assert changes == []


def test_restart_needed_only_for_postmaster_context() -> None:
    changes = classify_settings({"shared_buffers": "1GB", "bgwriter_delay": "60ms"}, {}, CONTEXTS)
    by_name = {c.name: c for c in changes}
    assert by_name["shared_buffers"].needs_restart
    assert not by_name["bgwriter_delay"].needs_restart


def test_removed_settings_are_reset() -> None:
    changes = classify_settings({}, {"synchronous_commit": "off"}, CONTEXTS)
    assert len(changes) == 1 and changes[0].value is None


def test_unknown_and_read_only_settings_are_errors() -> None:
    with pytest.raises(SettingsError, match="unknown setting 'no_such_thing'"):
        classify_settings({"no_such_thing": "1"}, {}, CONTEXTS)
    with pytest.raises(SettingsError, match="read-only"):
        classify_settings({"server_version": "1"}, {}, CONTEXTS)


def test_attached_server_needs_the_flag_and_never_restarts() -> None:
    reload_only = classify_settings({"synchronous_commit": "off"}, {}, CONTEXTS)
    with pytest.raises(SettingsError, match="--allow-settings"):
        refuse_for_attached(reload_only, allow_settings=False)
    refuse_for_attached(reload_only, allow_settings=True)
    restart = classify_settings({"shared_buffers": "1GB"}, {}, CONTEXTS)
    with pytest.raises(SettingsError, match="restart"):
        refuse_for_attached(restart, allow_settings=True)


def test_a_role_without_a_superusers_rights_is_told_what_it_may_not_set() -> None:
    """On a user's server pgopt sets a session setting on its own database (its owner
    may), a superuser-context one only where the role may SET it, a server-wide one
    with ALTER SYSTEM where it may, and a reload and pg_file_settings to put it back."""
    changes = classify_settings(
        {"synchronous_commit": "off", "bgwriter_delay": "60ms", "log_statement": "all"},
        {},
        CONTEXTS,
    )
    monitor = SettingRights("monitor", superuser=False, version_num=180001)
    why = monitor.refused(changes)
    assert why is not None and why.startswith("role monitor may not set bgwriter_delay")
    assert "GRANT ALTER SYSTEM ON PARAMETER bgwriter_delay TO monitor" in why
    assert "GRANT SET ON PARAMETER log_statement TO monitor" in why
    assert "synchronous_commit" not in why and "parameter group" in why
    # what the session settings need, a database of its own, it has
    assert monitor.refused([c for c in changes if c.context == "user"]) is None
    grants = (frozenset({"bgwriter_delay"}), frozenset({"log_statement"}))
    granted = SettingRights("Monitor", False, 180001, *grants, True, True)
    assert granted.refused(changes) is None
    # granted ALTER SYSTEM but not what puts the value back: still refused
    half = SettingRights("Monitor", False, 180001, *grants, may_reload=True)
    why = half.refused(changes)
    assert why is not None and 'TO "Monitor", and EXECUTE on pg_reload_conf() and, to put' in why
    # tune's script is ALTER SYSTEM whatever the setting's context, and puts nothing back
    assert half.refused_alter_system(["bgwriter_delay"]) is None
    script = half.refused_alter_system(["bgwriter_delay", "synchronous_commit"])
    assert script is not None and script.startswith('role "Monitor" may not set synchronous')
    # before 15 nothing can be granted on a setting: a superuser alone
    old = SettingRights("monitor", False, 140010).refused(changes)
    assert old is not None and "GRANT" not in old and "before PostgreSQL 15" in old
    assert SettingRights("postgres", True, 140010).refused(changes) is None


def test_a_step_the_role_may_not_set_is_skipped_with_the_reason() -> None:
    monitor = SettingRights("monitor", superuser=False, version_num=180001)
    wanted = {"bgwriter_delay": "60ms"}
    why = unsupported_reason(wanted, CONTEXTS, owned=False, allow_settings=True, rights=monitor)
    assert why is not None and "ALTER SYSTEM" in why
    session = {"synchronous_commit": "off"}
    assert (
        unsupported_reason(session, CONTEXTS, owned=False, allow_settings=True, rights=monitor)
        is None
    )
    # a server pgopt started: whatever its role
    assert (
        unsupported_reason(wanted, CONTEXTS, owned=True, allow_settings=True, rights=monitor)
        is None
    )
