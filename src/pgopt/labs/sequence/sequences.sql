-- Seed 004: every sequence of the lab, created once so that the steps differ only
-- in their pgbench script, clients and values per call (and can be interleaved).
-- The article altered one sequence between its tests (CACHE 1 <-> CACHE 100000);
-- here each setting has its own objects.
drop table if exists seq_values, seq_pick;
do $$
declare
  r record;
begin
  for r in select relname from pg_class where relkind = 'S' and relnamespace = 'public'::regnamespace loop
    execute format('drop sequence %I', r.relname);
  end loop;
end
$$;

-- One sequence: no cache (CACHE 1, the default) and CACHE 100000.
create sequence seq_nc;
create sequence seq_c cache 100000;

-- 64 sequences as in the article's DO block: INCREMENT 64, starts staggered 0..63,
-- so that together they hand out every integer once ("并轨", merged streams).
-- seq_nc_N without cache, seq_c_N with CACHE 100000; u_nc_N and u_c_N belong to
-- the uniqueness runs only, so that their gaps count nothing but their own runs.
do $$
declare
  f record;
begin
  for f in select * from (values ('seq_nc_', 1), ('seq_c_', 100000), ('u_nc_', 1), ('u_c_', 100000))
                         as family (prefix, cache) loop
    for i in 0..63 loop
      execute format('create sequence %I increment by 64 minvalue 0 start %s cache %s',
                     f.prefix || i, i, f.cache);
    end loop;
  end loop;
end
$$;

-- The 64 sequences by number, as regclass (an OID): a script can pick one without
-- building its name, and nextval(regclass column) looks nothing up by name.
create table seq_pick (
  id int primary key,
  nc regclass not null,   -- seq_nc_<id>
  c regclass not null     -- seq_c_<id>
);
insert into seq_pick
  select i, format('seq_nc_%s', i)::regclass, format('seq_c_%s', i)::regclass
  from generate_series(0, 63) i;

-- Hi/lo block reservation: one nextval reserves 1000 values that the client hands
-- out itself (hi, hi+1, ..., hi+999).
create sequence seq_hilo increment by 1000;
create sequence u_hilo increment by 1000;

-- One sequence for the uniqueness runs, per cache setting.
create sequence u_nc;
create sequence u_c cache 100000;

-- UNLOGGED sequences exist from PostgreSQL 15; their steps say min_server = 15.
do $$
begin
  if current_setting('server_version_num')::int >= 150000 then
    execute 'create unlogged sequence seq_ul';
  end if;
end
$$;

-- Values the uniqueness runs generated: a duplicate breaks the primary key (the
-- pgbench client aborts and the run fails) and the lab's check counts them anyway.
create table seq_values (
  kind text not null,     -- which sequence (or merged family) made the value
  v bigint not null,
  client int not null,    -- pgbench's client_id: proof that clients ran concurrently
  primary key (kind, v)
);

analyze seq_pick;
