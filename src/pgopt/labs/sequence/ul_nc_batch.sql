-- 100,000 values per call from an UNLOGGED sequence without cache (PostgreSQL 15+).
select nextval('seq_ul') from generate_series(1, 100000);
