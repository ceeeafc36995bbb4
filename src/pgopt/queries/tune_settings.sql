-- Every setting with its type, unit, bounds, choices, context, boot value and source, and the
-- figures a tuning profile needs (pgopt tune; read-only).
select name, setting, unit, vartype, min_val, max_val, enumvals, context, boot_val, source,
       current_setting('server_version_num')::int as version_num,
       current_setting('max_connections')::int as max_connections,
       (select coalesce(sum(pg_database_size(oid)), 0)::bigint from pg_database
         where has_database_privilege(oid, 'connect')) as data_bytes
from pg_settings
