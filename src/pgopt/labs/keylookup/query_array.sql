-- One key's ~10,000 rows aggregated into one row (the article's test1.sql).
\set keys greatest(:rows / 10000, 1)
\set typeid random(0, :keys - 1)
select * from test_array where typeid = :typeid;
