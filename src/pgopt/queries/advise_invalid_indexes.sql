-- Invalid indexes, except those a CREATE INDEX CONCURRENTLY is building now
-- (pgopt advise).
select format('%%I.%%I', n.nspname, ci.relname) as index,
       format('%%I.%%I', n.nspname, t.relname) as "table",
       pg_size_pretty(pg_relation_size(i.indexrelid)) as size
from pg_index i
join pg_class ci on ci.oid = i.indexrelid
join pg_class t on t.oid = i.indrelid
join pg_namespace n on n.oid = t.relnamespace
where not i.indisvalid
  and not exists (select 1 from pg_stat_progress_create_index p where p.index_relid = i.indexrelid)
