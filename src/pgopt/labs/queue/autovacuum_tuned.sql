-- Vacuum the queue table as soon as dead tuples pile up at its head, without throttling.
alter table t_order_q set (
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
