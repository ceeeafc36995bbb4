-- The same key's rows through postgres_fdw: the key prunes to one foreign partition.
\set keys greatest(:rows / 10000, 1)
\set typeid random(0, :keys - 1)
select * from test_sharded where typeid = :typeid;
