-- The same over the shards: each foreign partition scans its rows; grouped by the
-- partition key, so with enable_partitionwise_aggregate each shard can count its own.
\set r random(0, 999)
select typeid, count(*) from test_sharded where id % 1000 = :r group by typeid;
