-- One sample of what the watched sessions are doing, one row per bucket:
--   CPU                 active with no wait event (running, or waiting for a core)
--   Type:Event          active and waiting, e.g. IO:WalSync, Lock:transactionid
--   IdleInTransaction   between statements of an open transaction
--   Client:ClientRead   idle, waiting for the client's next command
-- Parameters: databases (name[]) and applications (text[]) to watch; no applications:
-- every application but pgopt's own (pgopt advise on a live server).
select bucket, count(*)::int as backends
from (
    select case
               when state = 'active' then coalesce(wait_event_type || ':' || wait_event, 'CPU')
               when state like 'idle in transaction%%' then 'IdleInTransaction'
               when state = 'idle' then 'Client:ClientRead'
           end as bucket
    from pg_stat_activity
    where datname = any(%(databases)s)
      and (application_name = any(%(applications)s)
           or (cardinality(%(applications)s::text[]) = 0 and application_name not like 'pgopt%%'))
      and pid <> pg_backend_pid()
) classified
where bucket is not null
group by bucket
