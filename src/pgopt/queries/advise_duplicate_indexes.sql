-- Indexes whose columns lead another valid index of the same table, with the same
-- access method, expressions and predicate, and that are neither unique nor a
-- primary key (PgHero's rule). Two identical indexes: the newer one is reported.
-- Their keys' operator classes and collations lead the other's too, as the wiki's
-- duplicate index query and pg-index-health compare them: Django's `..._like` index
-- (varchar_pattern_ops, for a prefix LIKE under a non-C collation) is no duplicate of
-- the column's unique index. (indclass and indcollation: one entry a key column.)
select format('%%I.%%I', n.nspname, ci.relname) as index,
       format('%%I.%%I', n.nspname, co.relname) as covered_by,
       format('%%I.%%I', n.nspname, t.relname) as "table",
       pg_size_pretty(pg_relation_size(i.indexrelid)) as size
from pg_index i
join pg_index o on o.indrelid = i.indrelid and o.indexrelid <> i.indexrelid
join pg_class ci on ci.oid = i.indexrelid
join pg_class co on co.oid = o.indexrelid
join pg_class t on t.oid = i.indrelid
join pg_namespace n on n.oid = t.relnamespace
where i.indisvalid and o.indisvalid and not i.indisunique and not i.indisprimary
  and ci.relam = co.relam
  and (o.indkey::text || ' ') like (i.indkey::text || ' %%')
  and (o.indclass::text || ' ') like (i.indclass::text || ' %%')
  and (o.indcollation::text || ' ') like (i.indcollation::text || ' %%')
  and coalesce(pg_get_expr(i.indexprs, i.indrelid), '') = coalesce(pg_get_expr(o.indexprs, o.indrelid), '')
  and coalesce(pg_get_expr(i.indpred, i.indrelid), '') = coalesce(pg_get_expr(o.indpred, o.indrelid), '')
  and (o.indnatts > i.indnatts or o.indisunique or i.indexrelid > o.indexrelid)
  and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_toast'
