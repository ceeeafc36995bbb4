-- Untimed, before every run: drop what the previous run left (the restore brings
-- the tables back from the dump), make the log tables the phases write to, leave
-- the WAL files as this profile keeps them, and checkpoint so that no run pays
-- for the previous run's dirty buffers.
drop table if exists bt_a, bt_b, bt_c, batch_expected, batch_log, batch_result;

-- rows changed by each update statement, from psql's :ROW_COUNT
create table batch_log (what text primary key, rows bigint not null);

-- one line per magic_select query: its answer, or a digest of its rows
create table batch_result (query text primary key, result text not null);

-- WAL files: a run writes about :wal_mb MB of WAL into files that exist (recycled
-- at a checkpoint) or that it must make, zero-filled, as it goes. What exists
-- depends on the run before: after the defaults' run (max_wal_size 1GB) a tuned
-- profile's run made 1 GB of them and waited on IO:WalInitWrite (2 to 3 s more
-- in its string updates, 2026-11-25). Writing a run's worth of WAL here, then
-- the CHECKPOINT below, leaves what this profile's own min_wal_size and
-- max_wal_size keep after such a run, as on a server that ran the batch before:
-- the run before no longer matters.
select count(pg_logical_emit_message(false, 'pgopt batch reset', repeat('x', 1048000)))
from generate_series(1, :wal_mb);

checkpoint;
