-- Untimed, before every run: drop what the previous run left (the restore brings
-- the tables back from the dump), make the log tables the phases write to, and
-- checkpoint so that no run pays for the previous run's dirty buffers.
drop table if exists bt_a, bt_b, bt_c, batch_expected, batch_log, batch_result;

-- rows changed by each update statement, from psql's :ROW_COUNT
create table batch_log (what text primary key, rows bigint not null);

-- one line per magic_select query: its answer, or a digest of its rows
create table batch_result (query text primary key, result text not null);

checkpoint;
