-- Sequences with their cache, position and the range of the column they feed
-- (pgopt advise; PostgreSQL 10+). last_value is null for a sequence never used
-- or not readable by this role.
select format('%%I.%%I', s.schemaname, s.sequencename) as sequence,
       s.cache_size, coalesce(s.last_value, 0) as last_value,
       coalesce(format_type(a.atttypid, null), s.data_type::text) as column_type,
       least(s.max_value, case a.atttypid when 'int2'::regtype then 32767
                                          when 'int4'::regtype then 2147483647
                                          else s.max_value end) as limit_value,
       round(100.0 * coalesce(s.last_value, 0)
             / nullif(least(s.max_value, case a.atttypid when 'int2'::regtype then 32767
                                                       when 'int4'::regtype then 2147483647
                                                       else s.max_value end), 0), 2)::float8
         as used_pct
from pg_sequences s
join pg_namespace n on n.nspname = s.schemaname
join pg_class c on c.relnamespace = n.oid and c.relname = s.sequencename
left join pg_depend d on d.objid = c.oid and d.classid = 'pg_class'::regclass
                     and d.refclassid = 'pg_class'::regclass and d.deptype in ('a', 'i')
left join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
where s.increment_by > 0
