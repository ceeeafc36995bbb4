-- 100,000 values per call from one of 64 sequences (no cache), picked once per call
-- from seq_pick by regclass: no name is built or looked up per row.
\set id random(0, 63)
select nextval(p.nc) from seq_pick p, generate_series(1, 100000) where p.id = :id;
