-- The tables the index advisor weighs (parameter: tables, schema.name): rows, pages,
-- rows written since the statistics began (HOT updates apart), whether pg_trgm is here.
select format('%%s.%%s', n.nspname, c.relname) as name,
       greatest(c.reltuples, 0)::float8 as rows, c.relpages::bigint as pages,
       coalesce(s.n_tup_ins, 0) as inserts, coalesce(s.n_tup_upd, 0) as updates,
       coalesce(s.n_tup_hot_upd, 0) as hot_updates, coalesce(s.n_tup_del, 0) as deletes
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
left join pg_stat_user_tables s on s.relid = c.oid
where format('%%s.%%s', n.nspname, c.relname) = any(%(tables)s)
