-- Checkpoints started so far (from PostgreSQL 17, in pg_stat_checkpointer).
select num_timed + num_requested as checkpoints from pg_stat_checkpointer
