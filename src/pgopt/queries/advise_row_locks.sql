-- One sample of the sessions of this database that wait for a row lock (pgopt advise,
-- hot-rows): the statement waiting, the table whose row it waits for (the tuple lock
-- it holds while it waits on the row's transaction, or awaits behind another waiter;
-- a wait on a transaction without a tuple lock names no table, so the tables its
-- transaction writes come too), how many sessions block it and what the first of
-- them runs. pg_blocking_pids runs for the waiting sessions only.
select a.pid, a.wait_event, a.query,
       (select format('%%I.%%I', n.nspname, c.relname)
          from pg_locks l
          join pg_class c on c.oid = l.relation
          join pg_namespace n on n.oid = c.relnamespace
         where l.pid = a.pid and l.locktype = 'tuple'
           and l.database = (select oid from pg_database where datname = current_database())
         limit 1) as "table",
       array(select format('%%I.%%I', n.nspname, c.relname)
               from pg_locks l
               join pg_class c on c.oid = l.relation
               join pg_namespace n on n.oid = c.relnamespace
              where l.pid = a.pid and l.locktype = 'relation' and l.mode = 'RowExclusiveLock'
                and c.relkind in ('r', 'p')) as written,
       cardinality(b.pids) as blockers,
       (select s.query from pg_stat_activity s where s.pid = b.pids[1]) as blocking_query
from pg_stat_activity a
cross join lateral (select pg_blocking_pids(a.pid) as pids) b
where a.datname = current_database()
  and a.wait_event_type = 'Lock' and a.wait_event in ('transactionid', 'tuple')
  and a.pid <> pg_backend_pid()
