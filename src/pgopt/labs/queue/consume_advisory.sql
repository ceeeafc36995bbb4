-- Seed 001 (t.sql): one statement; pg_try_advisory_xact_lock(id) picks the first order
-- no other consumer holds, the delete by ctid removes it and feeds the insert.
with tmp as
  (delete from t_order_q where ctid = (select ctid from t_order_q where pg_try_advisory_xact_lock(id) order by id limit 1) returning order_id, cts)
insert into t_order_u (order_id, cts, uts, status) select tmp.order_id, tmp.cts, now(), 1 from tmp;
