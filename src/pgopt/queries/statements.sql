-- pg_stat_statements of the watched databases (parameter: databases); PostgreSQL 13+.
select s.queryid::text as queryid, s.query, s.calls, s.total_exec_time as total_ms, s.rows,
       s.shared_blks_hit, s.shared_blks_read
from pg_stat_statements s
join pg_database d on d.oid = s.dbid
where d.datname = any(%(databases)s) and s.queryid is not null
