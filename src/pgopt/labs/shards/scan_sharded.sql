-- The same over the shards: each foreign partition scans its rows.
\set r random(0, 999)
select count(*) from test_sharded where id % 1000 = :r;
