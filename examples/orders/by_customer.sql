-- the workload: the orders of one customer (a pgbench script)
\set c random(1, 20000)
select count(*), sum(amount) from orders where customer_id = :c;
