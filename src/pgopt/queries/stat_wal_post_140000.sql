-- WAL written since the statistics were reset (pg_stat_wal exists from PostgreSQL 14).
select wal_records, wal_fpi, wal_bytes, wal_buffers_full from pg_stat_wal
