-- One key's ~10,000 rows from the table on this server (the keylookup lab's query).
\set keys greatest(:rows / 10000, 1)
\set typeid random(0, :keys - 1)
select * from test_local where typeid = :typeid;
