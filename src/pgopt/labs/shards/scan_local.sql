-- A query every partition must answer: one row in 1,000, counted.
\set r random(0, 999)
select count(*) from test_local where id % 1000 = :r;
