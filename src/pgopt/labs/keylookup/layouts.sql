-- The other layouts of the same rows, each in its own table so every step can be
-- measured interleaved with the baseline (A B A B), not one after another.
set max_parallel_workers_per_gather = 0;
set synchronize_seqscans = off;
-- Index builds and CLUSTER sort in memory rather than in temporary files.
set maintenance_work_mem = '256MB';
drop table if exists test_clustered, test_covering, test_brin, test_array, test_jsonb cascade;
drop type if exists test_row cascade;

-- 1. The article's optimisation: CLUSTER on the typeid index. A copy of test, then
--    the article's own command, so the rows of a key sit in ~64 adjacent pages.
create table test_clustered as select * from test;
create index idx_test_clustered_typeid on test_clustered (typeid);
cluster test_clustered using idx_test_clustered_typeid;

-- 2. A covering index on the random table: the index is ordered by typeid and holds
--    every column, so an index-only scan reads a key's ~64 leaf pages and never the
--    scattered heap, while the heap stays in random order (no CLUSTER to repeat).
--    Index-only scans need the visibility map: finish.sql vacuums.
create table test_covering as select * from test;
create index idx_test_covering on test_covering (typeid) include (id, info, crt_time, mod_time);

-- 3. BRIN after clustering (the article's reference): the clustered rows with only a
--    BRIN index, which stores min/max typeid per range of 16 pages (a key spans ~64
--    pages). Kilobytes instead of the btree's megabytes; it reads whole ranges and
--    rechecks every row in them.
create table test_brin as select * from test_clustered;
create index idx_test_brin on test_brin using brin (typeid) with (pages_per_range = 16);

-- 4. Each key aggregated into one row: an array of a composite type ...
create type test_row as (id int, info text, crt_time timestamp, mod_time timestamp);
create table test_array as
  select typeid, array_agg(row(id, info, crt_time, mod_time)::test_row order by id) as content
  from test group by typeid;
create index idx_test_array_typeid on test_array (typeid);

-- 5. ... and the article's jsonb: jsonb_agg(jsonb_build_object('id',id,'info',info,
--    'crt_time',crt_time,'mod_time',mod_time)). to_jsonb of the composite array builds
--    exactly the same jsonb value (same keys, same order) in a quarter of the time.
create table test_jsonb as select typeid, to_jsonb(content) as content from test_array;
create index idx_test_jsonb_typeid on test_jsonb (typeid);
