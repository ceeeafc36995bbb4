-- Seed 004 [8]: 100,000 values per call from one of 64 sequences (no cache); the
-- name is concatenated and looked up again for every row (the cost the article blamed).
\set id random(0, 63)
select nextval('seq_nc_' || :id) from generate_series(1, 100000);
