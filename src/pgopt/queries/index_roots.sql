-- The partitioned table each partition the advisor's plans read belongs to
-- (parameter: tables, schema.name, each part as quote_ident writes it): an index
-- made on it is made on every partition.
select t.name, format('%%I.%%I', n.nspname, c.relname) as root
from unnest(%(tables)s::text[]) t(name)
join pg_class c on c.oid = pg_partition_root(to_regclass(t.name))
join pg_namespace n on n.oid = c.relnamespace
where c.oid <> to_regclass(t.name)
