-- The indexes of the advisor's tables (parameter: tables, schema.name, each part as
-- quote_ident writes it): each key as pg_get_indexdef prints it, its direction, the
-- INCLUDE columns, the predicate; the whole definition, for the operator classes and
-- collations that are not the default.
select format('%%I.%%I', n.nspname, ci.relname) as name,
       format('%%I.%%I', n.nspname, ct.relname) as table_name,
       am.amname as method, i.indisvalid as valid, i.indnkeyatts as key_count,
       i.indoption::int2[] as options,
       array(select pg_get_indexdef(i.indexrelid, k, true)
             from generate_series(1, i.indnatts) k) as columns,
       pg_get_expr(i.indpred, i.indrelid, true) as predicate,
       pg_get_indexdef(i.indexrelid) as definition
from pg_index i
join pg_class ci on ci.oid = i.indexrelid
join pg_class ct on ct.oid = i.indrelid
join pg_namespace n on n.oid = ct.relnamespace
join pg_am am on am.oid = ci.relam
where format('%%I.%%I', n.nspname, ct.relname) = any(%(tables)s)
