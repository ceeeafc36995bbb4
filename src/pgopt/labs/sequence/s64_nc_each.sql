-- Seed 004 [6]: one of 64 sequences (no cache) at random, its name built by ||.
\set id random(0, 63)
select nextval('seq_nc_' || :id);
