-- Seed 004 [2] [7]: 100,000 values per call from one sequence without cache.
select nextval('seq_nc') from generate_series(1, 100000);
