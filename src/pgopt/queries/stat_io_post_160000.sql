-- IO by kind of process (pg_stat_io exists from PostgreSQL 16).
select backend_type,
       coalesce(sum(reads), 0) as reads,
       coalesce(sum(writes), 0) as writes,
       coalesce(sum(extends), 0) as extends,
       coalesce(sum(fsyncs), 0) as fsyncs
from pg_stat_io
group by backend_type
