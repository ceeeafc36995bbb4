-- A query every partition must answer: per key, how many of its rows are one in 1,000.
\set r random(0, 999)
select typeid, count(*) from test_local where id % 1000 = :r group by typeid;
