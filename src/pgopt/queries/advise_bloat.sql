-- Space a table wastes, measured by pgstattuple rather than estimated from pg_stats
-- (pgopt advise). The 10 largest tables of 5 MiB or more: pgstattuple reads those
-- up to 256 MiB whole (exact); larger ones through pgstattuple_approx (the visibility
-- map's all-visible pages from the free space map). Waste is dead rows plus free
-- space beyond what the table's fillfactor keeps free on purpose. The gating quals
-- on the size are pseudo-constant: only one of the two functions runs per table.
with big as (
  select c.oid, format('%%I.%%I', n.nspname, c.relname) as "table",
         pg_relation_size(c.oid) as bytes,
         coalesce((select option_value::int from pg_options_to_table(c.reloptions)
                   where option_name = 'fillfactor'), 100) as fillfactor
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'm') and c.relpersistence <> 't'
    and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_toast'
    and pg_relation_size(c.oid) >= 5 * 1024 * 1024
  order by pg_relation_size(c.oid) desc
  limit 10
),
measured as (
  select b.*, s.dead_percent, s.free_percent, s.method
  from big b
  cross join lateral (
    select t.dead_tuple_percent as dead_percent, t.free_percent, 'pgstattuple' as method
    from pgstattuple(b.oid) t where b.bytes <= 256 * 1024 * 1024
    union all
    select a.dead_tuple_percent, a.approx_free_percent, 'pgstattuple_approx'
    from pgstattuple_approx(b.oid) a where b.bytes > 256 * 1024 * 1024
  ) s
)
select "table", bytes, pg_size_pretty(bytes) as size, fillfactor, method,
       round(dead_percent::numeric, 1)::float8 as dead_percent,
       round(free_percent::numeric, 1)::float8 as free_percent,
       round(greatest(0, dead_percent + free_percent - (100 - fillfactor))::numeric, 1)::float8
         as waste_percent,
       pg_size_pretty((greatest(0, dead_percent + free_percent - (100 - fillfactor)) / 100
                       * bytes)::bigint) as waste
from measured
