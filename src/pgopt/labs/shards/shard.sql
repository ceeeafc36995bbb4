-- On each shard server (pgopt runs it with :shard, 1-based, and :shards): the table
-- the coordinator's foreign partition test_sharded_<shard> writes to and reads from.
drop table if exists test;
create table test (id int, info text, typeid int, crt_time timestamp);
create index test_typeid on test (typeid);
