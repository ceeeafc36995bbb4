-- pg_stat_statements of the current database, with the planning share (non-zero
-- only with pg_stat_statements.track_planning = on). pgopt advise; PostgreSQL 13+.
select s.queryid::text as queryid, s.query, s.calls, s.total_exec_time::float8 as exec_ms,
       s.total_plan_time::float8 as plan_ms,
       (s.total_plan_time / nullif(s.total_plan_time + s.total_exec_time, 0))::float8
         as plan_share
from pg_stat_statements s
where s.dbid = (select oid from pg_database where datname = current_database())
  and s.queryid is not null
