"""Wait classification, statistics deltas, the why-line and the validity guards (pure parts)."""

from collections import Counter

from pgopt.analysis import bottleneck, guards, observed


def test_shares_sum_to_one_and_are_sorted() -> None:
    counts = Counter({"CPU": 3, "IO:WalSync": 1})
    shares = observed.shares(counts)
    assert list(shares) == ["CPU", "IO:WalSync"]
    assert shares == {"CPU": 0.75, "IO:WalSync": 0.25}
    assert observed.shares(Counter()) == {}


def test_delta_of_snapshots() -> None:
    before = {
        "database": {"xact_commit": 10, "blks_read": 5},
        "wal": {"wal_bytes": 1000, "wal_fpi": 1},
        "io": {
            "client backend": {"reads": 1, "writes": 2, "extends": 0, "fsyncs": 0},
            "checkpointer": {"reads": 0, "writes": 7, "extends": 0, "fsyncs": 1},
        },
        "checkpoints": 3,
        "statements": {
            "42": {
                "query": "select 1",
                "calls": 10,
                "total_ms": 5.0,
                "rows": 10,
                "shared_blks_hit": 0,
                "shared_blks_read": 0,
            }
        },
    }
    after = {
        "database": {"xact_commit": 110, "blks_read": 5},
        "wal": {"wal_bytes": 51000, "wal_fpi": 1},
        "io": {
            "client backend": {"reads": 1, "writes": 12, "extends": 1, "fsyncs": 0},
            "checkpointer": {"reads": 0, "writes": 7, "extends": 0, "fsyncs": 1},
        },
        "checkpoints": 4,
        "statements": {
            "42": {
                "query": "select 1",
                "calls": 110,
                "total_ms": 25.0,
                "rows": 110,
                "shared_blks_hit": 0,
                "shared_blks_read": 0,
            },
            "43": {
                "query": "select 2",
                "calls": 0,
                "total_ms": 0.0,
                "rows": 0,
                "shared_blks_hit": 0,
                "shared_blks_read": 0,
            },
        },
    }
    d = observed.delta(before, after)
    assert d["database"] == {"xact_commit": 100, "blks_read": 0}
    assert d["wal"]["wal_bytes"] == 50000
    assert d["io"] == {"client backend": {"reads": 0, "writes": 10, "extends": 1, "fsyncs": 0}}
    assert d["checkpoints"] == 1
    assert [s["query"] for s in d["statements"]] == ["select 1"]
    assert d["statements"][0]["mean_ms"] == 0.2
    figures = observed.unit_figures(d, 100)
    assert figures["wal_bytes_per_tx"] == 500 and figures["blks_read_per_tx"] == 0
    assert "wal_bytes_per_run" in observed.unit_figures(d, None)


def test_why_line_names_what_moved() -> None:
    before = {"IO:WalSync": 0.38, "CPU": 0.41, "Client:ClientRead": 0.21}
    after = {"IO:WalSync": 0.0, "CPU": 0.77, "Client:ClientRead": 0.23}
    line = bottleneck.why_line(
        after, before, {"wal_bytes_per_tx": 1200.0}, {"wal_bytes_per_tx": 1210.0}
    )
    assert line.startswith("IO:WalSync 38% -> 0%; CPU 41% -> 77%")
    assert "Client:ClientRead" not in line  # a 2-point move is not news
    assert "WAL bytes/tx 1.2k -> 1.2k" in line
    first = bottleneck.why_line(before, None, {}, None)
    assert first == "CPU 41%, IO:WalSync 38%, Client:ClientRead 21%"
    batch = bottleneck.why_line(
        after, before, {"wal_bytes_per_run": 7.6e9}, {"wal_bytes_per_run": 33.6e9}
    )
    assert "WAL bytes/run 33.6G -> 7.6G" in batch
    # PostgreSQL 17 renamed IO:WALSync to IO:WalSync: one wait across versions
    on_15 = {"IO:WALSync": 0.14, "CPU": 0.13, "Client:ClientRead": 0.73}
    on_18 = {"IO:WalSync": 0.12, "CPU": 0.14, "Client:ClientRead": 0.74}
    assert bottleneck.why_line(on_18, on_15, {}, {}) == "waits unchanged"


def test_guards() -> None:
    clean = guards.run_warnings(
        client_cpu_s=1.0, wall_s=20, threads=2, failed=0, checkpoints=0, duration_s=20, quick=False
    )
    assert clean == []
    bad = guards.run_warnings(
        client_cpu_s=19.5, wall_s=10, threads=2, failed=3, checkpoints=1, duration_s=5, quick=False
    )
    assert len(bad) == 4 and "CPU-bound" in bad[0]
    assert (
        guards.run_warnings(
            client_cpu_s=0, wall_s=5, threads=1, failed=0, checkpoints=0, duration_s=5, quick=True
        )
        == []
    )
    assert guards.contention_warning(10, 64, "t_order_q") is not None
    assert guards.contention_warning(1000, 64, "t_order_q") is None
    assert guards.merge([["a", "b"], ["a"]]) == ["a", "b (1 of 2 runs)"]
    # the same warning with other figures is one line, with their range
    ckpt = "{} checkpoint(s) started inside the timed run"
    runs = [[ckpt.format(65)], [ckpt.format(54)], [ckpt.format(59), "run 3 of 10"]]
    assert guards.merge(runs) == [
        "54–65 checkpoint(s) started inside the timed run",
        "run 3 of 10 (1 of 3 runs)",
    ]
    # decimals stay whole figures
    share = "pgopt itself used {}% of the CPU"
    assert guards.merge([[share.format("2.3")], [share.format("5")]]) == [
        "pgopt itself used 2.3–5% of the CPU"
    ]


def test_pgopts_own_cpu_above_2_percent_of_the_machine_is_flagged() -> None:
    assert guards.harness_warning(0.3, 20.0, 2) is None  # 0.75%
    assert guards.harness_warning(0.002, 0.03, 2) is None  # 3.3%, of a 30-ms run: not judged
    warning = guards.harness_warning(1.0, 20.0, 2)  # 2.5%
    assert warning is not None and warning.startswith("pgopt itself used 2.5% of the machine's")
