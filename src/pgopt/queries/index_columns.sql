-- The columns of the advisor's tables (parameter: tables, schema.name): pg_stats'
-- average width and distinct values (what this role may see), else the type's length;
-- the type's name (a domain's base type's), for the casts that leave a value as it is.
select format('%%s.%%s', n.nspname, c.relname) as table_name, a.attname as column_name,
       coalesce(s.avg_width, nullif(t.typlen, -1), 32)::float8 as width,
       coalesce(s.n_distinct, 0)::float8 as distinct_values,
       coalesce(b.typname, t.typname)::text as type_name
from pg_attribute a
join pg_class c on c.oid = a.attrelid
join pg_namespace n on n.oid = c.relnamespace
join pg_type t on t.oid = a.atttypid
left join pg_type b on b.oid = nullif(t.typbasetype, 0)
left join pg_stats s on s.schemaname = n.nspname and s.tablename = c.relname
                    and s.attname = a.attname and not s.inherited
where a.attnum > 0 and not a.attisdropped
  and format('%%s.%%s', n.nspname, c.relname) = any(%(tables)s)
