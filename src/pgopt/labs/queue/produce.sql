-- A producer: one new order per transaction (run at a fixed --rate beside the consumers).
insert into t_order_q (order_id, cts) values (gen_random_uuid(), clock_timestamp());
