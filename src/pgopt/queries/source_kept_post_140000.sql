-- What the source keeps of how its clients ran, since its statistics were reset (pgopt
-- ab, when its watch sees no work): pg_stat_database's commits, its sessions (how
-- many were opened; their connected, active and in-transaction time), when it was
-- reset; when pg_stat_statements was. Seconds since the epoch.
select d.xact_commit,
       extract(epoch from d.stats_reset)::float8 as database_reset,
       extract(epoch from (select stats_reset from pg_stat_statements_info))::float8
         as statements_reset,
       extract(epoch from now())::float8 as now,
       d.active_time as active_ms, d.idle_in_transaction_time as idle_in_transaction_ms,
       d.sessions, d.session_time as session_ms
from pg_stat_database d
where d.datname = current_database()
