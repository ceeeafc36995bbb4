-- Hash-mod sharding (the article's advice, not measured there): no locks to fight over.
with tmp as
  (delete from t_order_q where ctid = (select ctid from t_order_q where shard = :client_id order by id limit 1) returning order_id, cts)
insert into t_order_u (order_id, cts, uts, status) select tmp.order_id, tmp.cts, now(), 1 from tmp;
