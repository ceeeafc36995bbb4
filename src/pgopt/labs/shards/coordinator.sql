-- On the coordinator (pgopt's own server), whose foreign servers shard1 .. shardN
-- pgopt made: the keylookup lab's rows twice, on this server alone (test_local) and
-- hash-partitioned by typeid over the shards through postgres_fdw (test_sharded).
-- :rows rows, :rows / 10000 keys of about 10,000 rows each, the same on every run.
drop table if exists test_local, test_sharded cascade;
create extension if not exists dblink;  -- to VACUUM ANALYZE on each shard

set max_parallel_workers_per_gather = 0;  -- rows in physical order
create table test_local (id int, info text, typeid int, crt_time timestamp);
select setseed(0.5) as seeded \gset
insert into test_local (id, info, typeid, crt_time)
  select i, 'test', floor(random() * greatest(:rows / 10000, 1))::int,
         timestamp '2017-07-27 20:41:32' + i * interval '1 millisecond'
  from generate_series(1, :rows) i;
create index test_local_typeid on test_local (typeid);
vacuum analyze test_local;

create table test_sharded (id int, info text, typeid int, crt_time timestamp)
  partition by hash (typeid);
select format('create foreign table test_sharded_%s partition of test_sharded '
              'for values with (modulus %s, remainder %s) server shard%s '
              'options (table_name %L)', i, :shards, i - 1, i, 'test')
  from generate_series(1, :shards) i \gexec
-- postgres_fdw sends the rows 1,000 to an INSERT (batch_size, PostgreSQL 14+)
select format('alter server shard%s options (add batch_size %L)', i, '1000')
  from generate_series(1, :shards) i \gexec
insert into test_sharded select * from test_local;
select dblink_exec(format('shard%s', i), 'vacuum analyze test')
  from generate_series(1, :shards) i;
analyze test_sharded;

-- The remote SQL postgres_fdw sends for a query, and its async foreign scans, from
-- EXPLAIN VERBOSE (the lab's facts).
create or replace function remote_sql(query text) returns text
language plpgsql as $$
declare
  line text;
  remote text := '';
  async int := 0;
begin
  for line in execute 'explain (verbose, costs off) ' || query loop
    if line like '%Remote SQL:%' and remote = '' then
      remote := trim(split_part(line, 'Remote SQL:', 2));
    end if;
    if line like '%Async Foreign Scan%' then
      async := async + 1;
    end if;
  end loop;
  return remote || case when async > 0 then format(' (%s async foreign scans)', async) else '' end;
end $$;
