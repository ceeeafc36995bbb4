-- Included by dump.sql and restore.sql: where the dump lives, and a way to fail.
--
-- Why not the engine's own `dump = true` and `action = "restore"`: pgopt runs
-- pg_restore without --dbname, so PostgreSQL 18's pg_restore refuses to start
-- ("one of -d/--dbname and -f/--file must be specified") and older ones print
-- the SQL instead of restoring it. Until that is fixed, this lab runs the same
-- programs itself: pg_dump -Fc once after setup, pg_restore in the timed phase,
-- the binaries next to this psql, the libpq connection from the environment.
--
-- The dump sits beside the server's data folder, inside the folder pgopt made
-- for its embedded server and removes at the end; on any other server (--dsn)
-- the lab stops here rather than write next to someone's data.
create function pg_temp.fail(message text) returns void
language plpgsql
as $$ begin raise exception '%', message; end $$;

select regexp_replace(setting, '/[^/]+/?$', '') || '/batch.dump' as batch_dump,
       setting ~ '/pgopt-[^/]+/data/?$' as batch_embedded
from pg_settings
where name = 'data_directory' \gset

select pg_temp.fail('the batch lab keeps its dump in the folder of pgopt''s embedded '
                    'server: it cannot run on a server given with --dsn')
where not :'batch_embedded'::bool;

\setenv BATCH_DUMP :batch_dump
