"""Settings classification: reload or restart, unknown names, what a user's server allows."""

import pytest

from pgopt.errors import SettingsError
from pgopt.servers.settings import classify_settings, normalize, refuse_for_attached

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
