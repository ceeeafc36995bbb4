-- Batch dequeue (the article's advice, not measured there): :batch orders per statement,
-- SKIP LOCKED, the delete ... returning feeding the insert.
with tmp as
  (delete from t_order_q where id in (select id from t_order_q order by id limit :batch for update skip locked) returning order_id, cts)
insert into t_order_u (order_id, cts, uts, status) select tmp.order_id, tmp.cts, now(), 1 from tmp;
