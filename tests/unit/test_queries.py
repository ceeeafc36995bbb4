"""Server SQL files chosen by server version."""

import pytest

from pgopt.queries import find, load


def test_the_newest_variant_not_newer_than_the_server_is_chosen() -> None:
    assert "pg_stat_bgwriter" in load("checkpoints", 160004)
    assert "pg_stat_checkpointer" in load("checkpoints", 170000)
    assert "pg_stat_checkpointer" in load("checkpoints", 180006)


def test_a_statistic_a_server_lacks_has_no_query() -> None:
    assert find("stat_wal", 130014) is None
    assert find("stat_wal", 140000) is not None
    assert find("stat_io", 150010) is None
    with pytest.raises(LookupError, match="no query 'nosuch'"):
        load("nosuch")
