-- The tables the index advisor weighs (parameter: tables, schema.name, each part as
-- quote_ident writes it): rows, pages, rows written since the statistics began
-- (HOT updates apart); a partitioned table's are the sums of its partitions'.
select format('%%I.%%I', n.nspname, c.relname) as name,
       sum(greatest(l.reltuples, 0))::float8 as rows, sum(l.relpages)::bigint as pages,
       coalesce(sum(s.n_tup_ins), 0) as inserts, coalesce(sum(s.n_tup_upd), 0) as updates,
       coalesce(sum(s.n_tup_hot_upd), 0) as hot_updates,
       coalesce(sum(s.n_tup_del), 0) as deletes
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
cross join lateral (
    select c.oid as relid where c.relkind <> 'p'
    union all
    select t.relid from pg_partition_tree(c.oid) t where c.relkind = 'p' and t.isleaf
) leaf
join pg_class l on l.oid = leaf.relid
left join pg_stat_user_tables s on s.relid = l.oid
where format('%%I.%%I', n.nspname, c.relname) = any(%(tables)s)
group by n.nspname, c.relname
