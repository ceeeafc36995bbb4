-- The step's postgres_fdw options on every shard server: rows per FETCH
-- (:fetch_size; postgres_fdw's default is 100) and whether its foreign scans may run
-- at once under one Append (:async_capable, PostgreSQL 14+).
select format('alter server shard%s options (%s fetch_size %L, %s async_capable %L)', i,
              case when exists (select from pg_foreign_server s, unnest(s.srvoptions) o
                                where s.srvname = 'shard' || i and o like 'fetch_size=%')
                   then 'set' else 'add' end, :'fetch_size',
              case when exists (select from pg_foreign_server s, unnest(s.srvoptions) o
                                where s.srvname = 'shard' || i and o like 'async_capable=%')
                   then 'set' else 'add' end, :'async_capable')
  from generate_series(1, :shards) i \gexec
