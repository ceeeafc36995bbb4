-- Seed 004 [3] [9]: one value per call from one sequence with CACHE 100000.
select nextval('seq_c');
