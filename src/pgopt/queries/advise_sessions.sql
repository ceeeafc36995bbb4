-- Sessions inside a transaction, and for how long (pgopt advise).
select pid, coalesce(nullif(application_name, ''), '?') as application, state,
       extract(epoch from now() - xact_start)::float8 as xact_s
from pg_stat_activity
where xact_start is not null and backend_type = 'client backend' and pid <> pg_backend_pid()
