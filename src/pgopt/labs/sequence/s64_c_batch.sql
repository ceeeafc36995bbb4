-- Seed 004 [12]: 100,000 values per call from one of 64 sequences (CACHE 100000),
-- the name concatenated and looked up again for every row.
\set id random(0, 63)
select nextval('seq_c_' || :id) from generate_series(1, 100000);
