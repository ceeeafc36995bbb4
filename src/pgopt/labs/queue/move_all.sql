-- The ceiling: the whole queue moved by one set-based statement, in one session and
-- one transaction, with nothing to coordinate. Each row takes its own
-- clock_timestamp(), so the metric spans the statement's own work.
with moved as
  (delete from t_order_q returning order_id, cts)
insert into t_order_u (order_id, cts, uts, status)
select moved.order_id, moved.cts, clock_timestamp(), 1 from moved;
