"""A log capture without a server: the three log formats read alike (real lines of
sysbench's oltp_read_write, logged by PostgreSQL 18 with log_min_duration_statement
= 0), bad logs refused with what a capture needs, statements matched to
pg_stat_statements with their values (bind parameters or literals), and
transactions replayed with their statements together, in order."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from pgopt.replay.selection import select
from pgopt.replay.synthesize import synthesize
from pgopt.replay.values.draws import DRAW, RangeDraw, pool_from_values, sample
from pgopt.source.capture import Transaction, capture_of, literal_values, written_values
from pgopt.source.catalog import SourceStatement
from pgopt.source.log_reader import LogError, prefix_pattern, read_log
from tests.unit.test_ab_synthesis import CATALOG, POOLS

LOGS = Path(__file__).parent.parent / "data" / "logs"
PREFIX = "%m [%p] %c "


def test_csvlog_jsonlog_and_stderr_read_as_the_same_statements() -> None:
    read = {
        name: read_log((LOGS / f"sysbench-oltp_read_write.{name}").read_text(), PREFIX)
        for name in ("csv", "json", "stderr")
    }
    assert read["csv"] == read["json"] == read["stderr"]
    statements = read["csv"]
    # one session's transaction: BEGIN, 18 statements, COMMIT; parse and bind lines out
    assert statements[0].query == "BEGIN" and statements[-1].query == "COMMIT"
    assert len(statements) == 20 and len({s.session for s in statements}) == 1
    ranges = [s for s in statements if "BETWEEN" in s.query]
    assert ranges and all(s.prepared for s in statements)
    low, high = ranges[0].values[1], ranges[0].values[2]
    assert low is not None and high is not None and int(high) - int(low) == 99


def test_a_servers_log_is_read_for_one_database_where_it_names_each_lines() -> None:
    """A server's log holds every database's statements: csvlog and jsonlog name each
    line's database, a stderr prefix does with %d; the capture keeps the source's. A
    log that never names the source's database (a capture of production, replayed
    against a copy of another name) is read whole."""
    for name in ("csv", "json"):
        text = (LOGS / f"sysbench-oltp_read_write.{name}").read_text()
        assert len(read_log(text, PREFIX, database="sb")) == 20
        assert len(read_log(text, PREFIX, database="sb_copy")) == 20
    prefix = "%m [%p] %q%u@%d "  # Debian's
    text = (
        "2026-11-26 20:00:00.000 UTC [7] app@shop LOG:  statement: select 1\n"
        "2026-11-26 20:00:00.001 UTC [8] app@stock LOG:  statement: select 2\n"
    )
    assert [s.query for s in read_log(text, prefix, database="shop")] == ["select 1"]
    assert len(read_log(text, prefix)) == 2
    # a prefix without %d cannot tell: every line is kept
    text = "2026-11-26 20:00:00.000 UTC [7] LOG:  statement: select 1\n"
    assert len(read_log(text, "%m [%p] ", database="shop")) == 1


def test_rds_default_stderr_prefix_is_read_by_session_and_database() -> None:
    """RDS for PostgreSQL writes its stderr log with `%t:%r:%u@%d:[%p]:` (its
    documented default; docs/managed.md): sessions by %p, the database by %d, no
    time to the millisecond (so no application time inside a transaction)."""
    prefix = "%t:%r:%u@%d:[%p]:"
    text = (
        "2026-01-05 10:00:00 UTC:10.0.1.7(51234):app@shop:[4242]:LOG:  duration: 0.120 ms"
        "  execute <unnamed>: select * from orders where customer_id = $1\n"
        "2026-01-05 10:00:00 UTC:10.0.1.7(51234):app@shop:[4242]:DETAIL:  Parameters: $1 = '12'\n"
        "2026-01-05 10:00:01 UTC:[local]:app@stock:[4243]:LOG:  statement: select 1\n"
    )
    (statement,) = read_log(text, prefix, database="shop")
    assert (statement.session, statement.values, statement.ms) == ("4242", {1: "12"}, 0.12)
    assert statement.prepared and statement.at is None


def test_a_stderr_prefix_reads_its_session_and_application() -> None:
    pattern = prefix_pattern("%t [%p]: [%l-1] user=%u,db=%d,app=%a %c ")
    line = (
        "2026-11-26 20:07:58 UTC [731]: [5-1] user=app,db=shop,app=psql 6b08919e.2db "
        "LOG:  duration: 0.1 ms  statement: select 1"
    )
    match = pattern.match(line)
    assert match is not None
    assert (match["p"], match["a"], match["c"]) == ("731", "psql", "6b08919e.2db")
    assert match["message"] == "duration: 0.1 ms  statement: select 1"


def test_a_multi_line_statement_and_pgopts_own_sessions() -> None:
    text = (
        "2026-11-26 20:00:00.000 UTC [7] 1.a LOG:  statement: select *\n"
        "\tfrom orders where id = 5\n"
        "2026-11-26 20:00:00.001 UTC [8] 1.b LOG:  execute <unnamed>: select $1\n"
        "2026-11-26 20:00:00.001 UTC [8] 1.b DETAIL:  Parameters: $1 = 'it''s', $2 = NULL\n"
    )
    first, second = read_log(text, PREFIX)
    assert first.query == "select *\nfrom orders where id = 5" and not first.prepared
    assert second.values == {1: "it's", 2: None} and second.session == "1.b"
    jsonlog = '{"session_id":"1.c","error_severity":"LOG","message":"statement: select 2"}\n'
    ours = jsonlog.replace('"LOG"', '"LOG","application_name":"pgopt ab"')
    assert len(read_log(jsonlog + ours)) == 1


BULK = "INSERT INTO t (id, name) VALUES " + ",".join(f"({i}, 'n\"{i}')" for i in range(12_000))


def test_a_statement_of_any_size_is_read_in_each_format() -> None:
    """A bulk INSERT's 200 KiB statement, and a 200 KiB value, in lines of the formats
    PostgreSQL 18 writes (the csvlog line one of sysbench's, its statement replaced):
    csv's own field limit is 128 KiB."""
    assert len(BULK) > 200 << 10
    quoted = BULK.replace('"', '""')
    csvlog = (
        '2026-11-26 20:10:03.094 UTC,"postgres","sb",1428,"127.0.0.1:42416",6b08921b.594,42,'
        '"INSERT",2026-11-26 20:10:03 UTC,19/40,0,LOG,00000,"duration: 0.040 ms  statement: '
        f'{quoted}",,,,,,,,,"","client backend",,174799990454808232\n'
    )
    jsonlog = json.dumps(
        {"timestamp": "2026-11-26 20:10:03.092 UTC", "session_id": "6b08921b.594"}
        | {"error_severity": "LOG", "message": f"duration: 0.040 ms  statement: {BULK}"}
    )
    stderr = f"2026-11-26 20:10:03.094 UTC [1428] 6b08921b.594 LOG:  statement: {BULK}\n"
    for text in (csvlog, jsonlog, stderr):
        (statement,) = read_log(text, PREFIX)
        assert statement.query == BULK
    value = "x" * (200 << 10)
    csvlog = csvlog.replace(
        f'statement: {quoted}",', f'execute s1: select $1","Parameters: $1 = \'{value}\'",'
    )
    (statement,) = read_log(csvlog)
    assert statement.values == {1: value}


def test_a_multi_line_statement_of_thousands_of_lines_and_its_multi_line_value() -> None:
    """Each line after the first begins with a tab, the DETAIL's too: the value's lines
    are the value's, not the statement's."""
    rows = [f"({i}, 'name {i}')," for i in range(10_000)]
    text = (
        "2026-11-26 20:00:00.000 UTC [7] 1.a LOG:  statement: insert into t values\n"
        + "".join(f"\t{row}\n" for row in rows)
        + "2026-11-26 20:00:00.001 UTC [7] 1.a LOG:  execute <unnamed>: select $1\n"
        + "2026-11-26 20:00:00.001 UTC [7] 1.a DETAIL:  Parameters: $1 = 'one\n\ttwo'\n"
    )
    bulk, prepared = read_log(text, PREFIX)
    assert bulk.query == "\n".join(["insert into t values", *rows])
    assert prepared.query == "select $1" and prepared.values == {1: "one\ntwo"}


@pytest.mark.parametrize(
    ("text", "prefix", "says"),
    [
        ("", PREFIX, "the log is empty"),
        ("hello\nworld\n", PREFIX, "no line of the log starts with its log_line_prefix"),
        ("2026-11-26 LOG:  statement: select 1\n", "%m ", "neither %c nor %p"),
        ("2026-11-26 LOG:  statement: select 1\n", None, "log_line_prefix is not known"),
        ('{"message": "x"}\n{oops\n', None, "jsonlog line 2 is not JSON"),
        ('{"a": 1}\n', None, "has no 'message'"),
        pytest.param(
            '{"message": "x", "pid": 1' + "0" * 5000 + "}\n",
            None,
            "not a PostgreSQL jsonlog",
            id="a number of 5,000 digits",
        ),
        pytest.param(
            "2026-11-26 20:10:03.092 UTC,a,b\rc,1428\n",
            None,
            "csvlog line 1 cannot be read as CSV",
            id="a carriage return outside a quoted csv field",
        ),
        (
            '{"session_id":"1.a","error_severity":"LOG","message":"duration: 0.1 ms  '
            'execute s1: select $1"}\n',
            None,
            "without their values",
        ),
        (
            '{"session_id":"1.a","error_severity":"LOG","message":"checkpoint complete"}\n',
            None,
            "holds no statement a session ran",
        ),
    ],
)
def test_a_log_that_is_no_capture_says_what_a_capture_needs(
    text: str, prefix: str | None, says: str
) -> None:
    with pytest.raises(LogError, match=re.escape(says)):
        read_log(text, prefix)


def test_literals_are_the_values_in_the_order_pg_stat_statements_numbers_them() -> None:
    assert literal_values("update t set k = k + 1, c = 'a''b' where id = -5 and x > 1.5e3") == (
        "1",
        "a'b",
        "-5",
        "1.5e3",
    )
    assert literal_values("select a-1 from t") == ("1",)


def _stderr(session: str, lines: list[str]) -> list[str]:
    return [f"2026-11-26 20:00:00.000 UTC [1] {session} LOG:  {line}" for line in lines]


def test_constants_in_a_prepared_statements_text_are_its_values_too() -> None:
    """sysbench prepares `UPDATE sbtest1 SET k=k+1 WHERE id=$1`; pg_stat_statements
    keeps `k=k+$2`: the 1 is in every call's text, where the bind values hold only
    $1 (real csvlog lines of it); a constant that does not line up is left out."""
    logged = read_log((LOGS / "sysbench-oltp_read_write.csv").read_text(), PREFIX)
    (update,) = [s for s in logged if s.query.startswith("UPDATE sbtest1 SET k=k+1")]
    normalized = SourceStatement("0", "UPDATE sbtest1 SET k=k+$2 WHERE id=$1", 1, 1.0, 1)
    assert written_values(update.query, normalized) == {2: "1"}
    assert capture_of([update], [normalized]).values["0"] == [{1: "50031", 2: "1"}]
    limit = SourceStatement("1", "select * from t where a = $1 and b = $2 limit $3", 1, 1.0, 1)
    assert written_values("select * from t where a = $1 and b = 'x' limit 1", limit) == {
        2: "x",
        3: "1",
    }
    assert written_values("select * from t where a = $1 and b = $2 limit $3", limit) == {}
    assert written_values("select * from t where a = $1 limit 1", limit) == {}


def test_three_sessions_replay_each_transaction_with_its_statements_together() -> None:
    """Interleaved sessions: a read-then-write transaction, an insert alone, and a
    delete of a key with the insert of it back, prepared and with literals."""
    select_q = "select * from orders where id = $1"
    update_q = "update orders set status = $1 where id = $2"
    insert_q = "insert into orders (id, status) values ($1, $2)"
    delete_q = "delete from orders where id = $1"
    one = _stderr("1.a", ["statement: BEGIN", "statement: select * from orders where id = 42"])
    one += _stderr("1.a", ["statement: update orders set status = 'paid' where id = 42"])
    one += _stderr("1.a", ["statement: COMMIT"])
    two = _stderr("1.b", ["execute s1: insert into orders (id, status) values ($1, $2)"])
    two.append("2026-11-26 20:00:00.000 UTC [1] 1.b DETAIL:  Parameters: $1 = '7', $2 = 'new'")
    three = _stderr("1.c", ["statement: BEGIN", "statement: delete from orders where id = 9"])
    three += _stderr("1.c", ["statement: insert into orders (id, status) values (9, 'x')"])
    three += _stderr("1.c", ["statement: COMMIT"])
    # the sessions' lines interleaved as concurrent sessions write them
    interleaved = [line for trio in zip(one, two + two, three, strict=True) for line in trio]
    logged = read_log("\n".join(interleaved) + "\n", PREFIX)
    statements = [
        SourceStatement(str(i), q, 100, 10.0, 100)
        for i, q in enumerate((select_q, update_q, insert_q, delete_q))
    ]
    capture = capture_of(logged, statements)
    assert capture.sessions == 3 and not capture.unmatched
    assert capture.values["0"] == [{1: "42"}] and capture.values["1"] == [{1: "paid", 2: "42"}]
    assert capture.values["2"].count({1: "7", 2: "new"}) == 2
    assert {1: "9", 2: "x"} in capture.values["2"]
    synthesis = synthesize(select(statements, CATALOG, 1.0), CATALOG, POOLS, capture=capture)
    names = {b.statement.query: b.name for b in synthesis.blocks}
    scripts = {s.name: s.text for s in synthesis.scripts}
    assert set(scripts) == {"tx02", "tx01", "alone01"}
    both = scripts["tx02"]  # the read, then the write, between BEGIN and COMMIT
    read, write = both.index(f"pgopt {names[select_q]} "), both.index(f"pgopt {names[update_q]} ")
    assert both.index("BEGIN;") < read < write < both.index("COMMIT;")
    assert "\\if" not in both  # one transaction of that kind: its statements as they ran
    pair = scripts["tx01"]  # the delete of a key and the insert of it back: one step
    assert pair.index(f"pgopt {names[delete_q]} ") < pair.index(f"pgopt {names[insert_q]} ")
    assert ":pgopt_key" in pair and "nextval(" not in pair
    alone = scripts["alone01"]  # the insert alone: a new key, in no transaction block
    assert "nextval(" in alone and "BEGIN" not in alone
    weights = {s.name: s.weight for s in synthesis.scripts}
    assert weights["alone01"] == 2 * weights["tx02"] == 2 * weights["tx01"]
    assert "transactions as the log capture ran them" in synthesis.shape
    # the values are the clients' own: none is drawn from the data's statistics
    assert not any(b.values_from_data for b in synthesis.blocks)


def test_captured_values_are_drawn_at_their_frequencies() -> None:
    rng = random.Random(44)
    hot = ["50"] * 600
    rest = [str(rng.randint(1, 10_000)) for _ in range(400)]
    pool = pool_from_values(hot + rest, "integer")
    assert pool.values == (("50", 0.6),)
    span = RangeDraw(pool, "integer", 0.0, 2, width=100)
    draws = [sample(span, rng) for _ in range(DRAW // 2)]
    share_hot = sum(low == "50" for low, _ in draws) / len(draws)
    assert 0.55 <= share_hot <= 0.65
    assert all(int(high) - int(low) == 99 for low, high in draws)
    cold = sorted(int(low) for low, _ in draws if low != "50")
    assert cold[0] >= 1 and cold[-1] <= 10_000
    text = pool_from_values(["a", "b", "a"], "text")
    assert text.values == (("a", 2 / 3), ("b", 1 / 3))


ORDERS = [
    SourceStatement("0", "select * from orders where id = $1", 100, 10.0, 100),
    SourceStatement("1", "update orders set status = $1 where id = $2", 100, 10.0, 100),
]


def _timed(seconds: tuple[str, ...]) -> str:
    """A transaction of one session, each statement taking 1 ms and its line written
    at the second given (when it ended): BEGIN, a read, a write, COMMIT."""
    texts = (
        "BEGIN",
        "select * from orders where id = 42",
        "update orders set status = 'paid' where id = 42",
        "COMMIT",
    )
    return "".join(
        f"2026-11-26 20:00:{at} UTC [1] 1.a LOG:  duration: 1.000 ms  statement: {text}\n"
        for at, text in zip(seconds, texts, strict=True)
    )


def test_the_applications_time_inside_a_transaction_is_replayed_as_sleep() -> None:
    """A session that works 40 ms between its statements, inside BEGIN and COMMIT:
    the capture reads it from each line's time less its duration (the line is written
    when the statement ends), and the replay sleeps as long inside its transaction."""
    logged = read_log(_timed(("00.000", "00.041", "00.082", "00.123")), PREFIX)
    assert logged[1].at is not None and logged[0].at is not None
    assert round(logged[1].at - logged[0].at, 3) == 0.041
    capture = capture_of(logged, ORDERS)
    (think,) = capture.think.values()
    assert think == [pytest.approx(120.0, abs=0.01)]  # three gaps of 41 ms, less 1 ms each
    synthesis = synthesize(select(ORDERS, CATALOG, 1.0), CATALOG, POOLS, capture=capture)
    (script,) = [s.text for s in synthesis.scripts]
    # spread over its three gaps: after BEGIN, between the two statements, before COMMIT
    assert script.count("\\sleep 40000 us") == 3
    assert script.index("\nBEGIN;") < script.index("\\sleep") < script.index("\nCOMMIT;")
    assert "120 ms a transaction, as \\sleep" in synthesis.shape


def test_round_trips_between_statements_are_not_replayed_as_sleep() -> None:
    """Half a millisecond a gap is the client's round trip, which pgbench makes too;
    the real sysbench capture's are such."""
    capture = capture_of(
        read_log(_timed(("00.000", "00.0015", "00.003", "00.0045")), PREFIX), ORDERS
    )
    (think,) = capture.think.values()
    assert think == [pytest.approx(1.5, abs=0.01)]
    synthesis = synthesize(select(ORDERS, CATALOG, 1.0), CATALOG, POOLS, capture=capture)
    assert synthesis.scripts and "\\sleep" not in "".join(s.text for s in synthesis.scripts)
    real = read_log((LOGS / "sysbench-oltp_read_write.stderr").read_text(), PREFIX)
    statements = [SourceStatement(str(i), s.query, 1, 1.0) for i, s in enumerate(real)]
    (samples,) = capture_of(real, statements).think.values()
    assert 0 < samples[0] / 19 < 1  # its 18 statements' 19 gaps


def _session_log(transactions: list[tuple[tuple[str, ...], float]]) -> str:
    """One session's transactions one after the other, each (its statements between
    BEGIN and COMMIT, the ms between two of its lines), each statement 1 ms."""
    lines, at = [], 0.0
    for texts, gap_ms in transactions:
        for text in ("BEGIN", *texts, "COMMIT"):
            at += gap_ms / 1000
            lines.append(
                f"2026-11-26 20:{int(at // 60):02d}:{at % 60:06.3f} UTC [1] 1.a LOG:  "
                f"duration: 1.000 ms  statement: {text}\n"
            )
        at += 0.002
    return "".join(lines)


READ = "select * from orders where id = 42"
WRITE = "update orders set status = 'paid' where id = 42"


def test_a_transaction_kind_seen_a_few_times_sleeps_as_the_capture_does() -> None:
    """Twenty transactions with round trips between their statements, and one of
    another kind with 2 s between its lines (a lock wait, a client's pause): one
    transaction's gaps are no estimate, so its script sleeps as the capture's median
    does (not at all), and the database's share is the others'. Seen five times,
    its own gaps are its own."""
    usual = [((READ, WRITE), 1.5)] * 20
    capture = capture_of(read_log(_session_log([*usual, ((READ,), 2000.0)]), PREFIX), ORDERS)
    synthesis = synthesize(select(ORDERS, CATALOG, 1.0), CATALOG, POOLS, capture=capture)
    scripts = {s.name: s.text for s in synthesis.scripts}
    assert set(scripts) == {"tx02", "tx01"}
    assert "\\sleep" not in scripts["tx01"] and "\\sleep" not in scripts["tx02"]
    # nor does it make the database's share: 4 ms of statements in about 5.5 ms a
    # transaction (its lines' times are to the millisecond), not 83 of 4,100
    assert capture.database_share is not None and capture.database_share > 0.7
    five = [((READ,), 2000.0)] * 5
    capture = capture_of(read_log(_session_log([*usual, *five]), PREFIX), ORDERS)
    synthesis = synthesize(select(ORDERS, CATALOG, 1.0), CATALOG, POOLS, capture=capture)
    scripts = {s.name: s.text for s in synthesis.scripts}
    assert scripts["tx01"].count("\\sleep 1999000 us") == 2  # its two gaps, less 1 ms each
    assert "\\sleep" not in scripts["tx02"]


def test_the_databases_share_of_a_captured_transaction_is_its_statements_time() -> None:
    """Four statements of 1 ms each, 120 ms of the application's between them: the
    database is 4 of 124 ms (an upper bound of its share: the time between the
    transactions is not in the log); the replay's workload carries it, with where
    it came from. A log without durations tells none."""
    capture = capture_of(read_log(_timed(("00.000", "00.041", "00.082", "00.123")), PREFIX), ORDERS)
    assert capture.database_share == pytest.approx(4 / 124, abs=1e-4)
    synthesis = synthesize(select(ORDERS, CATALOG, 1.0), CATALOG, POOLS, capture=capture)
    assert synthesis.workload.database_share == capture.database_share
    assert "an upper bound" in synthesis.workload.database_share_from
    untimed = _timed(("00.000", "00.041", "00.082", "00.123")).replace("duration: 1.000 ms  ", "")
    assert capture_of(read_log(untimed, PREFIX), ORDERS).database_share is None


def test_a_rolled_back_transactions_gaps_are_not_the_applications_time() -> None:
    """A transaction that waited a second on a lock and was rolled back (sysbench
    after a deadlock): the failed statement logs no duration, so its wait looks like a
    gap; it is neither slept nor counted in the database's share."""
    text = _timed(("00.000", "00.001", "00.002", "01.003")).replace(
        "statement: COMMIT", "statement: ROLLBACK"
    )
    capture = capture_of(read_log(text, PREFIX), ORDERS)
    assert capture.rolled_back == 1
    assert capture.think == {next(iter(capture.transactions)): []}
    assert capture.database_share is None
    synthesis = synthesize(select(ORDERS, CATALOG, 1.0), CATALOG, POOLS, capture=capture)
    assert "\\sleep" not in "".join(s.text for s in synthesis.scripts)


def test_an_orms_savepoints_stay_inside_its_transaction() -> None:
    """Django's atomic() blocks nest as savepoints: ROLLBACK TO SAVEPOINT and RELEASE
    are inside the transaction, which ends at its COMMIT with all its statements (the
    capture's regex ended it at the ROLLBACK TO, and counted a rollback)."""
    lines = [
        "statement: BEGIN",
        'statement: SAVEPOINT "s1_x1"',
        "statement: select * from orders where id = 42",
        'statement: ROLLBACK TO SAVEPOINT "s1_x1"',
        'statement: RELEASE SAVEPOINT "s1_x1"',
        "statement: /* app */ update orders set status = 'paid' where id = 42",
        "statement: COMMIT",
    ]
    capture = capture_of(read_log("\n".join(_stderr("1.a", lines)) + "\n", PREFIX), ORDERS)
    assert dict(capture.transactions) == {Transaction(("0", "1"), True): 1}
    assert capture.rolled_back == 0 and capture.statements == 2


def test_commit_and_chain_ends_one_transaction_and_begins_the_next() -> None:
    lines = [
        "statement: BEGIN",
        "statement: select * from orders where id = 1",
        "statement: COMMIT AND CHAIN",
        "statement: update orders set status = 'x' where id = 1",
        "statement: COMMIT",
        "statement: select * from orders where id = 2",
    ]
    capture = capture_of(read_log("\n".join(_stderr("1.a", lines)) + "\n", PREFIX), ORDERS)
    assert dict(capture.transactions) == {
        Transaction(("0",), True): 1,
        Transaction(("1",), True): 1,
        Transaction(("0",), False): 1,
    }
