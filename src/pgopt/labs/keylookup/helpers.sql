-- Helpers for the lab's facts and checks; each can be called by hand, e.g.
--   select * from kl_explain('test', 1);   select kl_measure('test_clustered');

-- Sampled keys, in tenths of the key range: facts use the odd tenths (k/10, 3k/10,
-- ..., 9k/10) and checks the even ones (0, k/5, 2k/5), so a check does not warm the
-- buffers a fact is about to count.
create or replace function kl_sample_keys(tenths int[]) returns int[]
language sql stable as $$
  select array_agg(distinct (t * p.keys) / 10)
  from kl_params p, unnest(tenths) t
$$;
create or replace function kl_fact_keys() returns int[]
language sql stable as $$ select kl_sample_keys(array[1, 3, 5, 7, 9]) $$;
create or replace function kl_check_keys() returns int[]
language sql stable as $$ select kl_sample_keys(array[0, 2, 4]) $$;

-- EXPLAIN (ANALYZE, BUFFERS) of the benchmark's query for one key, as JSON. From
-- PostgreSQL 17 on, SERIALIZE also converts the result to text as it would be sent,
-- detoasting jsonb and arrays, so their TOAST reads and the bytes sent are counted.
create or replace function kl_explain(tbl regclass, key int) returns json
language plpgsql as $$
declare
  opts text := 'analyze, buffers, timing off, format json';
  plan json;
begin
  if current_setting('server_version_num')::int >= 170000 then
    opts := opts || ', serialize text';
  end if;
  execute format('explain (%s) select * from %s where typeid = %s', opts, tbl, key) into plan;
  return plan -> 0;
end $$;

create table if not exists kl_measured (
  tbl text primary key,
  buffers numeric, hit numeric, read numeric, exec_ms numeric, output_kb numeric,
  heap_fetches numeric, plan text
);

-- Averages over 5 sampled keys, kept in kl_measured for the facts that follow:
-- shared buffers touched per query (hit + read, plan and serialization), how many of
-- them were already in shared_buffers, execution time in one idle session, kB sent,
-- and the plan's top node. Returns the buffers per query.
create or replace function kl_measure(tbl regclass) returns numeric
language plpgsql as $$
declare
  e json;
  k int;
  n int := 0;
  m kl_measured := row(tbl::text, 0, 0, 0, 0, null, null, null);
  hit numeric; read numeric;
begin
  foreach k in array kl_fact_keys() loop
    e := kl_explain(tbl, k);
    hit := (e -> 'Plan' ->> 'Shared Hit Blocks')::numeric
           + coalesce((e -> 'Serialization' ->> 'Shared Hit Blocks')::numeric, 0);
    read := (e -> 'Plan' ->> 'Shared Read Blocks')::numeric
           + coalesce((e -> 'Serialization' ->> 'Shared Read Blocks')::numeric, 0);
    m.hit := m.hit + hit;
    m.read := m.read + read;
    m.buffers := m.buffers + hit + read;
    m.exec_ms := m.exec_ms + (e ->> 'Execution Time')::numeric;
    m.output_kb := coalesce(m.output_kb, 0) + (e -> 'Serialization' ->> 'Output Volume')::numeric;
    m.heap_fetches := coalesce(m.heap_fetches, 0) + (e -> 'Plan' ->> 'Heap Fetches')::numeric;
    m.plan := e -> 'Plan' ->> 'Node Type';
    n := n + 1;
  end loop;
  m.buffers := round(m.buffers / n, 1);
  m.hit := round(m.hit / n, 1);
  m.read := round(m.read / n, 1);
  m.exec_ms := round(m.exec_ms / n, 2);
  m.output_kb := round(m.output_kb / n, 1);
  m.heap_fetches := round(m.heap_fetches / n, 1);
  delete from kl_measured where kl_measured.tbl = m.tbl;
  insert into kl_measured select m.*;
  return m.buffers;
end $$;

-- One figure kl_measure kept for a table ('n/a' where the server has none).
create or replace function kl_fact(tbl regclass, what text) returns text
language sql stable as $$
  select coalesce(case what
    when 'hit' then m.hit::text when 'read' then m.read::text
    when 'exec_ms' then m.exec_ms::text when 'output_kb' then m.output_kb::text
    when 'heap_fetches' then m.heap_fetches::text when 'plan' then m.plan
  end, 'n/a')
  from kl_measured m where m.tbl = $1::text
$$;

-- Heap pages holding a key's rows (from the rows' ctid), averaged over the sampled
-- keys: what an index scan must visit, whatever the plan.
create or replace function kl_heap_pages_per_key(tbl regclass) returns numeric
language plpgsql as $$
declare pages numeric;
begin
  execute format(
    'select round(avg(n), 1) from (select count(distinct (ctid::text::point)[0]) as n '
    'from %s where typeid = any($1) group by typeid) s', tbl)
    into pages using kl_fact_keys();
  return pages;
end $$;

-- pg_stats.correlation of typeid: 1 when physical order follows typeid, near 0
-- when random.
create or replace function kl_correlation(tbl text) returns text
language sql stable as $$
  select coalesce((
    select round(correlation::numeric, 4)::text from pg_stats
    where schemaname = current_schema() and tablename = tbl and attname = 'typeid'
  ), 'n/a')
$$;

-- md5 over the rows of the checks' keys, normalised to (id, info, typeid, crt_time)
-- in (typeid, id) order whatever the layout. mod_time is left out: the update
-- workload sets it in test_ff100 and test_ff80 by design.
create or replace function kl_rows_md5(layout text) returns text
language plpgsql as $$
declare
  q text;
  h text;
begin
  q := case layout
    when 'test_jsonb' then
      'select (e ->> ''id'')::int as id, e ->> ''info'' as info, t.typeid,
              (e ->> ''crt_time'')::timestamp as crt_time
       from test_jsonb t cross join lateral jsonb_array_elements(t.content) e
       where t.typeid = any($1)'
    when 'test_array' then
      'select r.id, r.info, t.typeid, r.crt_time
       from test_array t cross join lateral unnest(t.content) r
       where t.typeid = any($1)'
    else format('select id, info, typeid, crt_time from %I where typeid = any($1)', layout)
  end;
  execute format(
    'select md5(string_agg(concat_ws(''|'', id, info, typeid, crt_time), E''\n'' '
    'order by typeid, id)) || '':'' || count(*) from (%s) r', q)
    into h using kl_check_keys();
  return h;
end $$;

-- The same rows in every layout: true when all eight agree.
create or replace function kl_layouts_agree() returns boolean
language sql as $$
  select count(distinct kl_rows_md5(t)) = 1
  from unnest(array['test', 'test_clustered', 'test_covering', 'test_brin', 'test_array',
                    'test_jsonb', 'test_ff100', 'test_ff80']) t
$$;
