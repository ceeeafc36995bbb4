-- Seed 001: SKIP LOCKED, consumers pass over rows another consumer holds.
-- coalesce(..., 0) keeps \gset from failing once the queue is empty.
begin;
select coalesce((select id from t_order_q order by id for update skip locked limit 1), 0) as vid \gset
with tmp as (delete from t_order_q where id = :vid returning order_id, cts)
  insert into t_order_u (order_id, cts, uts, status) select tmp.order_id, tmp.cts, now(), 1 from tmp;
end;
