-- The statements the source's clients sent with their values written in (the simple
-- protocol, an ORM's client-side binding), each call once: those started since the
-- previous look (pgopt ab's watch, a hundred looks a second). Prepared statements
-- ($n: their values are not shown), transaction control, pgopt's own and those this
-- role may not see (pg_read_all_stats sees them) are left out;
-- at most 50 a look, the newest first. (Sent with parameters: %% is a per cent sign.)
select pid, query_start, query
from pg_stat_activity
where datname = current_database() and backend_type = 'client backend'
  and pid <> pg_backend_pid() and application_name not like 'pgopt%%'
  and query_start > %(since)s
  and query <> '' and query <> '<insufficient privilege>' and query !~ '\$[0-9]'
  and query !~* '^\s*(begin|commit|rollback|start|end|abort|savepoint|release|set|show|reset|discard|deallocate)\M'
order by query_start desc
limit 50
