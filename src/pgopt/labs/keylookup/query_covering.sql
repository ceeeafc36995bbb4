-- One key's ~10,000 rows, as the article's test.sql; keys are 0 .. rows/10000 - 1.
\set keys greatest(:rows / 10000, 1)
\set typeid random(0, :keys - 1)
select * from test_covering where typeid = :typeid;
