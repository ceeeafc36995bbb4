-- How far each database's oldest unfrozen XID and MultiXact lie behind (pgopt advise).
select datname::text as database, age(datfrozenxid)::bigint as xid_age,
       mxid_age(datminmxid)::bigint as mxid_age
from pg_database where datallowconn
