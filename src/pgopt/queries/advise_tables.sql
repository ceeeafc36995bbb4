-- Live and dead rows of the user's tables (pgopt advise).
select format('%%I.%%I', schemaname, relname) as "table", n_live_tup, n_dead_tup,
       (n_dead_tup::float8 / greatest(n_live_tup, 1)) as dead_per_live
from pg_stat_user_tables
