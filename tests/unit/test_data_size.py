"""The size of a copy, before anything is copied: pg_dump's --table patterns, the
sample's share of big tables, the disk check's one line."""

from pathlib import Path

import pytest

from pgopt.ab.data_size import TableSize, check_disk, copy_size, matches
from pgopt.errors import UsageError

MiB = 1 << 20
TABLES = [
    TableSize("public", "orders", 800 * MiB, 1000 * MiB),
    TableSize("public", "order_lines", 1600 * MiB, 2000 * MiB),
    TableSize("public", "countries", MiB // 4, MiB // 2),  # small: copied whole
    TableSize("audit", "orders", 100 * MiB, 100 * MiB),
]


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("orders", {"public.orders", "audit.orders"}),
        ("public.orders", {"public.orders"}),
        ("order*", {"public.orders", "public.order_lines", "audit.orders"}),
        ("ORDERS", {"public.orders", "audit.orders"}),  # unquoted: lower case
        ('"ORDERS"', set()),
        ("audit.*", {"audit.orders"}),
        ("countr?es", {"public.countries"}),
    ],
)
def test_table_patterns_match_as_pg_dump_matches_them(pattern: str, found: set[str]) -> None:
    assert {f"{t.schema}.{t.name}" for t in TABLES if matches(pattern, t)} == found


def test_a_sample_counts_big_tables_at_its_share_and_small_ones_whole() -> None:
    whole = copy_size(TABLES, (), None)
    assert whole.dump_bytes == (800 + 1600 + 100) * MiB + MiB // 4
    half = copy_size(TABLES, (), 50)
    assert half.database_bytes == (500 + 1000 + 50) * MiB + MiB // 2
    only = copy_size(TABLES, ("public.orders",), None)
    assert only.database_bytes == 1000 * MiB and only.local_bytes == 800 * MiB + 3000 * MiB


def test_a_copy_that_does_not_fit_is_one_line_with_the_sample_that_would(
    tmp_path: Path,
) -> None:
    huge = [TableSize("public", "big", 1 << 50, 1 << 50)]  # a PiB: fits nowhere
    with pytest.raises(UsageError) as e:
        check_disk(huge, (), None, tmp_path, server_here=True)
    text = str(e.value)
    assert "\n" not in text and text.startswith("the copy needs about ")
    assert "two templates and a clone" in text and "--table" in text
    small = [TableSize("public", "t", MiB, MiB)]
    assert check_disk(small, (), None, tmp_path, server_here=True).database_bytes == MiB


def test_the_line_names_a_sample_that_fits_where_one_does(tmp_path: Path) -> None:
    import shutil

    half_free = shutil.disk_usage(tmp_path).free // 2  # needs twice what is free
    big = [TableSize("public", "big", half_free, half_free)]
    with pytest.raises(UsageError) as e:
        check_disk(big, (), None, tmp_path, server_here=True)
    assert "--sample " in str(e.value) and " would need about " in str(e.value)
