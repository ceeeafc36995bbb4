-- Seed 004 [1] [5]: one value per call from one sequence without cache.
select nextval('seq_nc');
