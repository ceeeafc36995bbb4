-- Checkpoints since the statistics began: how many were requested (pgopt advise;
-- PostgreSQL 13, which counts no WAL bytes: the WAL per checkpoint is unknown).
select checkpoints_timed + checkpoints_req as checkpoints,
       (100.0 * checkpoints_req / nullif(checkpoints_timed + checkpoints_req, 0))::float8
         as requested_pct,
       null::float8 as wal_per_checkpoint_pct,
       current_setting('max_wal_size') as max_wal_size
from pg_stat_bgwriter
