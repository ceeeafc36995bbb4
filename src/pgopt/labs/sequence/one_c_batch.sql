-- Seed 004 [4] [11]: 100,000 values per call from one sequence with CACHE 100000.
select nextval('seq_c') from generate_series(1, 100000);
