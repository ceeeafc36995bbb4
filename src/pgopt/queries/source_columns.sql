-- The columns of the source's tables, views and foreign tables (pgopt ab's synthesis):
-- type, order, whether some unique index holds it, whether the search path finds it, and
-- the table's rows and pages (the planner's estimates).
select n.nspname as schema, c.relname as "table", a.attname as "column",
       greatest(c.reltuples, 0)::float8 as rows, c.relpages::float8 as pages,
       a.attnum as position, format_type(a.atttypid, a.atttypmod) as type,
       pg_table_is_visible(c.oid) as visible,
       exists (select 1 from pg_index i
               where i.indrelid = c.oid and i.indisunique and a.attnum = any(i.indkey))
         as is_unique
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
where c.relkind in ('r', 'p', 'v', 'm', 'f')
  and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_toast'
