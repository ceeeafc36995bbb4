-- Checkpoints since the statistics began: how many were requested, and the WAL
-- written per checkpoint against max_wal_size (pgopt advise; 17+).
select c.num_timed + c.num_requested as checkpoints,
       (100.0 * c.num_requested / nullif(c.num_timed + c.num_requested, 0))::float8
         as requested_pct,
       (100.0 * w.wal_bytes / nullif(c.num_timed + c.num_requested, 0)
              / pg_size_bytes(current_setting('max_wal_size')))::float8 as wal_per_checkpoint_pct,
       current_setting('max_wal_size') as max_wal_size
from pg_stat_checkpointer c, pg_stat_wal w
