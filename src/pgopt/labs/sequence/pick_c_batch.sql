-- 100,000 values per call from one of 64 sequences (CACHE 100000), picked once per
-- call from seq_pick by regclass.
\set id random(0, 63)
select nextval(p.c) from seq_pick p, generate_series(1, 100000) where p.id = :id;
