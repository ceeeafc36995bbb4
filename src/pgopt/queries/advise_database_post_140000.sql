-- The current database's counters, with sessions started (pgopt advise; 14+).
select datname::text as database, xact_commit, blks_hit, blks_read, sessions
from pg_stat_database where datname = current_database()
