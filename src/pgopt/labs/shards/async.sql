-- Foreign scans that run at once on every shard (async_capable, PostgreSQL 14+);
-- fetch_size back to postgres_fdw's default of 100.
select format('alter server shard%s options (%s fetch_size %L, %s async_capable %L)', i,
              case when exists (select from pg_foreign_server s, unnest(s.srvoptions) o
                                where s.srvname = 'shard' || i and o like 'fetch_size=%')
                   then 'set' else 'add' end, '100',
              case when exists (select from pg_foreign_server s, unnest(s.srvoptions) o
                                where s.srvname = 'shard' || i and o like 'async_capable=%')
                   then 'set' else 'add' end, 'true')
  from generate_series(1, :shards) i \gexec
