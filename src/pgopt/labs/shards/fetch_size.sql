-- Rows per FETCH from a shard: 10,000 (postgres_fdw's default is 100), no async scans.
select format('alter server shard%s options (%s fetch_size %L, %s async_capable %L)', i,
              case when exists (select from pg_foreign_server s, unnest(s.srvoptions) o
                                where s.srvname = 'shard' || i and o like 'fetch_size=%')
                   then 'set' else 'add' end, '10000',
              case when exists (select from pg_foreign_server s, unnest(s.srvoptions) o
                                where s.srvname = 'shard' || i and o like 'async_capable=%')
                   then 'set' else 'add' end, 'false')
  from generate_series(1, :shards) i \gexec
