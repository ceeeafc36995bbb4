-- The source's clients at one moment (pgopt ab's sample of how its workload runs):
-- their sessions in this database, pgopt's own left out, and how many of them last
-- ran a statement with $n (the extended protocol: prepared statements) or without
-- (transaction control, which drivers send as plain text either way, not counted);
-- and their states: running a statement, idle for under a second (between the
-- statements of a request: the application's own work), idle in a transaction.
-- PostgreSQL 18: commits less those of parallel workers, which commit too.
select now() as now, count(*) as sessions,
       count(*) filter (where query ~ '\$[0-9]') as parameterized,
       count(*) filter (where query <> '' and query !~ '\$[0-9]'
                        and query !~* '^\s*(begin|commit|rollback|start|end|abort)\M')
         as literal,
       count(*) filter (where state = 'active') as active,
       count(*) filter (where state = 'idle' and state_change > now() - interval '1 second')
         as idle_in_request,
       count(*) filter (where state like 'idle in transaction%') as idle_in_transaction,
       (select xact_commit - parallel_workers_launched from pg_stat_database
         where datname = current_database()) as xact_commit
from pg_stat_activity
where datname = current_database() and backend_type = 'client backend'
  and pid <> pg_backend_pid() and application_name not like 'pgopt%'
