-- Cumulative counters of the watched databases, summed (parameter: databases);
-- PostgreSQL 18 counts the parallel workers launched.
select coalesce(sum(xact_commit), 0) as xact_commit,
       coalesce(sum(xact_rollback), 0) as xact_rollback,
       coalesce(sum(blks_read), 0) as blks_read,
       coalesce(sum(blks_hit), 0) as blks_hit,
       coalesce(sum(tup_returned), 0) as tup_returned,
       coalesce(sum(tup_fetched), 0) as tup_fetched,
       coalesce(sum(tup_inserted), 0) as tup_inserted,
       coalesce(sum(tup_updated), 0) as tup_updated,
       coalesce(sum(tup_deleted), 0) as tup_deleted,
       coalesce(sum(temp_bytes), 0) as temp_bytes,
       coalesce(sum(deadlocks), 0) as deadlocks,
       -- each parallel worker commits too: counted apart, so commits can be the clients'
       coalesce(sum(parallel_workers_launched), 0) as parallel_workers_launched
from pg_stat_database
where datname = any(%(databases)s)
