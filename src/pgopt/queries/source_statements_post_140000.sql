-- pg_stat_statements of the current database, heaviest first (pgopt ab's synthesis);
-- 14+: top-level statements only (those in functions are replayed by their callers).
select s.queryid::text as queryid, s.query, s.calls, s.total_exec_time as total_ms,
       s.rows, s.shared_blks_hit + s.shared_blks_read as blocks,
       s.shared_blks_read as blocks_read, s.max_exec_time as max_ms
from pg_stat_statements s
where s.dbid = (select oid from pg_database where datname = current_database())
  and s.calls > 0 and s.queryid is not null and s.toplevel
order by s.total_exec_time desc
