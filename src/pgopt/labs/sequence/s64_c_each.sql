-- Seed 004 [10]: one of 64 sequences (CACHE 100000) at random, its name built by ||.
\set id random(0, 63)
select nextval('seq_c_' || :id);
