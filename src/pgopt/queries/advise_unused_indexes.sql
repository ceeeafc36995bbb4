-- Indexes no scan has used since the statistics began (neither unique nor a primary
-- key: those enforce something). pgopt advise.
select format('%%I.%%I', s.schemaname, s.indexrelname) as index,
       format('%%I.%%I', s.schemaname, s.relname) as "table",
       pg_relation_size(s.indexrelid) as bytes,
       pg_size_pretty(pg_relation_size(s.indexrelid)) as size,
       coalesce((select stats_reset::text from pg_stat_database where datname = current_database()),
                'the server started') as stats_since
from pg_stat_user_indexes s
join pg_index i on i.indexrelid = s.indexrelid
where s.idx_scan = 0 and not i.indisunique and not i.indisprimary and i.indisvalid
