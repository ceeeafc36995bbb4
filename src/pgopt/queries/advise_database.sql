-- The current database's counters (pgopt advise; PostgreSQL 13).
select datname::text as database, xact_commit, blks_hit, blks_read, 0::bigint as sessions
from pg_stat_database where datname = current_database()
