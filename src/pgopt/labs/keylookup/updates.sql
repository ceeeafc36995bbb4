-- "CLUSTER is static": updates move rows away from their key's pages unless there is
-- room for the new row version on the same page. The article's answer is
-- fillfactor (alter table test set (fillfactor=80)). Two copies of the clustered
-- rows, fillfactor 100 (the default) and 80, then the same update workload on both:
-- 10 transactions, each setting mod_time on 1% of the rows (10% of the rows in all).
-- Neither typeid nor any indexed column changes, so every update may be HOT
-- (heap-only tuple: new version on the same page, no new index entry) if the page
-- has room.
set max_parallel_workers_per_gather = 0;
set synchronize_seqscans = off;
-- Index builds and CLUSTER sort in memory rather than in temporary files.
set maintenance_work_mem = '256MB';
drop table if exists test_ff100, test_ff80 cascade;

-- Loaded in typeid order from test_clustered: the layout CLUSTER writes, with
-- each table's fillfactor applied as it fills the pages.
create table test_ff100 (like test) with (fillfactor = 100);
insert into test_ff100 select * from test_clustered;
create index idx_test_ff100_typeid on test_ff100 (typeid);
create unique index idx_test_ff100_id on test_ff100 (id);

create table test_ff80 (like test) with (fillfactor = 80);
insert into test_ff80 select * from test_clustered;
create index idx_test_ff80_typeid on test_ff80 (typeid);
create unique index idx_test_ff80_id on test_ff80 (id);

vacuum (freeze, analyze) test_ff100, test_ff80;

-- Batch r updates ids r+1, r+101, r+201, ...: spread evenly over every key and
-- page, and visited in id order, which is random with respect to typeid (and so to
-- the physical order). The index scan on id keeps that order; a bitmap or
-- sequential scan would visit rows in physical (= typeid) order and append moved
-- rows already sorted by key, which no real workload does.
set enable_bitmapscan = off;
set enable_seqscan = off;

create or replace procedure kl_update_workload(tbl regclass)
language plpgsql as $$
declare
  n int := (select rows from kl_params);
begin
  for r in 1..10 loop
    execute format(
      'update %s set mod_time = crt_time + interval ''1 day'' where id = any($1)', tbl)
      using array(select generate_series(r, n, 100));
    commit;  -- each batch its own transaction, so later ones can prune earlier dead rows
  end loop;
end $$;

call kl_update_workload('test_ff100');
call kl_update_workload('test_ff80');
reset enable_bitmapscan;
reset enable_seqscan;
