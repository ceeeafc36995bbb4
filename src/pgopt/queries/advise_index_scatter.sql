-- Index scans with the index entries they read (plain and bitmap scans alike) and how the first column's values lie on the
-- table's pages (pg_stats.correlation: null when the table was never analyzed or
-- pg_stats is not visible to this role). pgopt advise.
select format('%%I.%%I', s.schemaname, s.relname) as "table",
       format('%%I.%%I', s.schemaname, s.indexrelname) as index,
       format('%%I', s.indexrelname) as index_name,
       a.attname::text as "column", format('%%I', a.attname) as column_ident, st.correlation::float8 as correlation,
       s.idx_scan, s.idx_tup_read, c.relpages as table_pages
from pg_stat_user_indexes s
join pg_index i on i.indexrelid = s.indexrelid
join pg_class c on c.oid = s.relid
join pg_attribute a on a.attrelid = s.relid and a.attnum = i.indkey[0]
left join pg_stats st on st.schemaname = s.schemaname and st.tablename = s.relname
                     and st.attname = a.attname and not st.inherited
where i.indkey[0] <> 0
