"""What pgopt reads from a source, said before it reads it, and the pace of a physical
copy: `--copy-rate` in pg_basebackup's units, bad input one line and exit 2; and the
share of the tables advise's copy check takes (whole, or a sample where big)."""

from pathlib import Path

import pytest

from pgopt.ab.data_size import TableSize
from pgopt.ab.reading import (
    DEFAULT_RATE,
    CopyPace,
    SourceRead,
    checkpoint_wait,
    copy_pace,
    parse_copy_rate,
    synthesis_reads,
)
from pgopt.cli import main
from pgopt.errors import UsageError
from pgopt.indexes.copy_check import WHOLE_BYTES, copy_share

MIB = 1 << 20


@pytest.mark.parametrize(
    ("text", "rate"),
    [
        ("50M", 50 * MIB),
        ("50m", 50 * MIB),
        ("1G", 1024 * MIB),
        ("1.5M", 1536 * 1024),
        ("512k", 512 * 1024),
        ("2048", 2048 * 1024),  # a bare number is kB a second, as pg_basebackup takes it
        ("100MB/s", 100 * MIB),
        ("0", None),
        ("max", None),
        ("MAX", None),
    ],
)
def test_a_copy_rate_reads_as_pg_basebackup_units(text: str, rate: int | None) -> None:
    assert parse_copy_rate(text) == rate


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("fast", "expected a rate such as 50M or 1G"),
        ("-5M", "expected a rate such as 50M or 1G"),
        ("10T", "expected a rate such as 50M or 1G"),
        ("10k", "between 32k and 1G a second"),
        ("2G", "between 32k and 1G a second"),
    ],
)
def test_a_bad_copy_rate_is_one_line_and_exit_2(
    text: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "read.sql").write_text("select 1;\n")
    args = ["ab", "--source-dsn", "postgresql://nobody@127.0.0.1:1/none", "--script"]
    args += [str(tmp_path / "read.sql"), "--copy-rate", text, "--out", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"pgopt: error: --copy-rate {text}: "), err
    assert said in err[0]
    assert not (tmp_path / "out").exists()


def test_the_default_pace_is_a_spread_checkpoint_and_50_mib_a_second() -> None:
    pace = copy_pace(None, None)
    assert pace == CopyPace(DEFAULT_RATE, "spread") and pace.max_rate() == "51200"
    assert copy_pace("max", "fast").max_rate() is None
    with pytest.raises(UsageError):
        copy_pace("fast", None)


def test_the_line_says_the_size_the_pace_the_wait_and_about_how_long() -> None:
    wait, setting = checkpoint_wait(300, 0.9)
    assert wait == 270 and setting == "checkpoint_timeout 5min × checkpoint_completion_target 0.9"
    read = SourceRead("physical", 2 * 1024 * MIB, "SRC", CopyPace(50 * MIB), wait, setting)
    assert read.describe() == (
        "2 GiB from SRC (pg_basebackup of its whole cluster, at most 50 MiB/s: about 41 s, "
        "after a spread checkpoint of up to 4.5 min (checkpoint_timeout 5min × "
        "checkpoint_completion_target 0.9), twice that when one is under way as on a busy "
        "source; --copy-checkpoint fast: at once, its dirty pages written in a burst)"
    )
    fast = SourceRead("physical", 2 * 1024 * MIB, "SRC", CopyPace(None, "fast"))
    assert "unthrottled: about 7 s, after a fast checkpoint" in fast.describe()
    logical = SourceRead("logical", 1024 * MIB, "SRC").describe()
    assert "pg_dump of its database in one snapshot, one job" in logical
    assert "no rate limit, pg_dump has none" in logical
    sampled = SourceRead("sampled", 1024 * MIB, "SRC", sample=10).describe()
    assert "10% of the rows" in sampled and "TABLESAMPLE BERNOULLI reads every page" in sampled


def test_a_watch_and_a_capture_are_said_and_a_few_queries_are_not() -> None:
    assert "watch its sessions for 10 s" in (synthesis_reads("SRC", 10, 0) or "")
    assert "for 8 s (its log settings set with ALTER SYSTEM" in (synthesis_reads("SRC", 0, 8) or "")
    assert synthesis_reads("SRC", 0, 0) is None


def test_advise_copies_whole_up_to_a_gigabyte_then_a_sample(tmp_path: Path) -> None:
    small = [TableSize("public", "t", 100 * MIB, 150 * MIB)]
    assert copy_share(small, ("public.t",), tmp_path).sample is None
    big = [TableSize("public", "big", 3 * WHOLE_BYTES, 4 * WHOLE_BYTES)]
    big.append(TableSize("public", "lookup", MIB // 2, MIB))  # under 1 MiB: whole
    share = copy_share(big, ("public.big", "public.lookup"), tmp_path)
    assert share.sample == 25  # 3 GiB at 25%: 768 MiB of rows, at 50% 1.5 GiB
    assert share.read_bytes == 3 * WHOLE_BYTES + MIB // 2  # a sample reads every page
    assert share.local_bytes < share.whole_bytes
    other = copy_share(big, ("public.lookup",), tmp_path)  # only what the copy takes
    assert other.sample is None and other.read_bytes == MIB // 2


def test_a_copys_progress_in_a_log_is_its_checkpoint_then_a_line_a_tenth() -> None:
    from io import StringIO

    from rich.console import Console

    from pgopt.ab.copy_progress import CopyProgress

    log = StringIO()
    read = SourceRead("physical", 100 * MIB, "SRC", CopyPace(50 * MIB), 270.0, "s")
    with CopyProgress(Console(file=log, width=200), read) as progress:
        progress.checkpoint_done()
        for done in range(0, 101, 4):
            progress.copied(done * MIB, 100 * MIB)
        progress.copied(100 * MIB, 100 * MIB)  # pg_basebackup's last report, again
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("pgopt: the source's spread checkpoint took ")
    assert len(lines) == 11 and lines[-1].startswith("pgopt: copied 100 MiB of 100 MiB (100%")
    assert "of about 2 s" in lines[-1]
