-- Seed 001: the order queue and the processed-orders table, re-created before every
-- timed run so that each run starts from the same queue of :orders orders.
drop table if exists t_order_q, t_order_u;

create table t_order_q (
  id serial8 primary key,   -- arrival order
  order_id uuid unique,     -- the upstream order number
  cts timestamp not null    -- when upstream created the order
);

create table t_order_u (
  id serial8 primary key,
  order_id uuid unique,
  cts timestamp not null,
  uts timestamp not null,   -- when it was processed
  status int not null
);

insert into t_order_q (order_id, cts)
  select gen_random_uuid(), clock_timestamp() from generate_series(1, :orders);

vacuum analyze t_order_q, t_order_u;
