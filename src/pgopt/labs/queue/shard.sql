-- Sharded consumers: each of the :clients consumers owns the orders with
-- id % :clients = its client_id, so no two consumers ever want the same row.
alter table t_order_q add column shard int generated always as ((id % :clients)::int) stored;
create index t_order_q_shard on t_order_q (shard, id);
analyze t_order_q;
