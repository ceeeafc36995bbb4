-- Checkpoints since the statistics began: how many were requested, and the WAL
-- written per checkpoint against max_wal_size (pgopt advise; 14 to 16). A requested
-- checkpoint may also come from CREATE DATABASE or a base backup: WAL volume near
-- max_wal_size says it came from WAL.
select b.checkpoints_timed + b.checkpoints_req as checkpoints,
       (100.0 * b.checkpoints_req / nullif(b.checkpoints_timed + b.checkpoints_req, 0))::float8
         as requested_pct,
       (100.0 * w.wal_bytes / nullif(b.checkpoints_timed + b.checkpoints_req, 0)
              / pg_size_bytes(current_setting('max_wal_size')))::float8 as wal_per_checkpoint_pct,
       current_setting('max_wal_size') as max_wal_size
from pg_stat_bgwriter b, pg_stat_wal w
