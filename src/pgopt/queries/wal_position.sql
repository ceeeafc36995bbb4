-- Bytes of WAL inserted since the cluster began: differences give WAL written.
select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0') as position
