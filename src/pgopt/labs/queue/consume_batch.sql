-- Batch dequeue (the article's advice, not measured there): :batch orders per statement,
-- SKIP LOCKED, the delete ... returning feeding the insert. Each order is stamped with
-- clock_timestamp(), not now() (the transaction's start): with 1,000 orders a
-- statement, now() would leave the last statement's own work out of the metric's span.
with tmp as
  (delete from t_order_q where id in (select id from t_order_q order by id limit :batch for update skip locked) returning order_id, cts)
insert into t_order_u (order_id, cts, uts, status) select tmp.order_id, tmp.cts, clock_timestamp(), 1 from tmp;
