-- Checkpoints started so far (before PostgreSQL 17, in pg_stat_bgwriter).
select checkpoints_timed + checkpoints_req as checkpoints from pg_stat_bgwriter
