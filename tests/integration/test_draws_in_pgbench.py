"""A replay's draw as pgbench evaluates it: for every one of the DRAW values of its
random number, the arm pgbench's `case` picks (read by halves, replay/values/draws.py) is
the arm the cuts give, and so the arm `sample` mirrors in the unit tests."""

from pathlib import Path

import psycopg

from pgopt.pgbench.command import PgbenchSpec, ScriptRef
from pgopt.pgbench.runner import run_pgbench
from pgopt.replay.values.draws import DRAW, Pool, RangeDraw, cumulative_cuts, render, widths
from pgopt.servers.embedded import EmbeddedTarget

from .conftest import new_database


def test_pgbench_picks_the_arm_the_cuts_give_for_every_draw(
    server: EmbeddedTarget, tmp_path: Path
) -> None:
    # 3 common values, then 47 ranges of uneven weights, one rounding away, and a
    # run of ranges whose widths are equal (merged into one arm of the width's case)
    values = (("7", 0.05), ("7000", 0.002), ("11", 0.00001))
    ranges = tuple((100 * i, 100 * i + 40 + i, 0.01 + (i % 7) * 0.003) for i in range(1, 48))
    pool = Pool(values, ranges, "the data's statistics (pg_stats)", rows=100_000.0)
    draw = RangeDraw(pool, "integer", rows=20.0, high=2)
    lines, _ = render(1, draw)
    assert lines[0] == f"\\set pgopt_r1 random(1, {DRAW})"
    script = tmp_path / "draw.sql"
    script.write_text(
        "select nextval('r') as pgopt_r1 \\gset\n"
        + "\n".join(lines[1:])
        + "\ninsert into drawn values (:pgopt_r1, :pgopt_p1, :pgopt_p2);\n"
    )
    dsn = new_database(server, "draws")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("create sequence r; create table drawn (r int, low int, high int)")
    env = server.client_env() | {"PGDATABASE": dsn.rsplit("/", 1)[1]}
    run_pgbench(
        server.binaries.path("pgbench"),
        PgbenchSpec((ScriptRef(path=script),), duration_s=None, transactions=DRAW),
        env,
        cwd=tmp_path,
    )
    with psycopg.connect(dsn) as conn:
        drawn = conn.execute("select r, low, high from drawn order by r").fetchall()
    assert [r for r, _, _ in drawn] == list(range(1, DRAW + 1))
    arms = [(int(v), int(v)) for v, _ in values] + [(lo, hi) for lo, hi, _ in ranges]
    cuts = cumulative_cuts([w for _, w in values] + [w for _, _, w in ranges])
    width = widths(draw)
    for r, low, high in drawn:
        index = next(i for i, cut in enumerate(cuts) if r <= cut)
        a, b = arms[index]
        assert a <= low <= b, (r, low, arms[index])
        assert high == low + width[index] - 1, (r, low, high, width[index])
    assert "case when :pgopt_r1 <= " in lines[1] and lines[1].count("case") < 60
