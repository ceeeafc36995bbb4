-- The columns of the advisor's tables (parameter: tables, schema.name, each part as
-- quote_ident writes it): pg_stats' average width and distinct values (what this
-- role may see; a partitioned table's from ANALYZE of it, else its largest
-- partition's), else the type's length; the type's name (a domain's base type's),
-- for the casts that leave a value as it is.
select format('%%I.%%I', n.nspname, c.relname) as table_name, a.attname as column_name,
       coalesce(s.avg_width, nullif(t.typlen, -1), 32)::float8 as width,
       coalesce(s.n_distinct, 0)::float8 as distinct_values,
       coalesce(b.typname, t.typname)::text as type_name
from pg_attribute a
join pg_class c on c.oid = a.attrelid
join pg_namespace n on n.oid = c.relnamespace
join pg_type t on t.oid = a.atttypid
left join pg_type b on b.oid = nullif(t.typbasetype, 0)
left join lateral (
    select st.avg_width, st.n_distinct, 'infinity'::float4 as rows
    from pg_stats st
    where st.schemaname = n.nspname and st.tablename = c.relname and st.attname = a.attname
      and st.inherited = (c.relkind = 'p')
    union all
    select st.avg_width, st.n_distinct, pc.reltuples
    from pg_partition_tree(c.oid) p
    join pg_class pc on pc.oid = p.relid
    join pg_namespace pn on pn.oid = pc.relnamespace
    join pg_stats st on st.schemaname = pn.nspname and st.tablename = pc.relname
                    and st.attname = a.attname and not st.inherited
    where c.relkind = 'p' and p.isleaf
    order by 3 desc
    limit 1
) s on true
where a.attnum > 0 and not a.attisdropped
  and format('%%I.%%I', n.nspname, c.relname) = any(%(tables)s)
