-- One value per call from an UNLOGGED sequence without cache (PostgreSQL 15+): no WAL.
select nextval('seq_ul');
