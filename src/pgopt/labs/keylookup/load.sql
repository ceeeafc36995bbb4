-- The article's table: about 10,000 rows per typeid, typeid random, so the rows of
-- one key are scattered over the whole table (pg_stats correlation near 0).
-- :rows rows (5,000,000 at scale 1) and :rows / 10000 keys (500 at scale 1); the
-- article had 1e9 rows and 100,000 keys, so 10,000 rows per key as here.
-- Run by hand with: psql -v rows=5000000 -f load.sql
drop table if exists test, kl_params cascade;

-- Serial and in physical order: no parallel workers reshuffling rows while copying.
set max_parallel_workers_per_gather = 0;
set synchronize_seqscans = off;
-- Index builds and CLUSTER sort in memory rather than in temporary files.
set maintenance_work_mem = '256MB';

create table kl_params as
  select :rows::bigint as rows, greatest(:rows / 10000, 1)::int as keys;

create table test (
  id int,
  info text,           -- the article's stand-in for the other attributes
  typeid int,          -- the key every query filters on
  crt_time timestamp,
  mod_time timestamp   -- null until a row is updated, as in the article
);

-- The article: insert into test select generate_series(1,1000000000), 'test',
-- random()*99999, now(). Here the keys are 0 .. keys-1 with equal chances, the seed
-- is fixed (same data on every run), and crt_time differs per row.
select setseed(0.5) as seeded \gset
insert into test (id, info, typeid, crt_time)
  select i, 'test', floor(random() * p.keys)::int,
         timestamp '2017-07-27 20:41:32' + i * interval '1 millisecond'
  from kl_params p, generate_series(1, p.rows) i;

create index idx_test_typeid on test (typeid);
