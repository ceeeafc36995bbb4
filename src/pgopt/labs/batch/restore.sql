-- Phase "restore": pg_restore of the dump taken after setup into the emptied
-- database (the untimed reset phase dropped the tables): one session, COPY of
-- each table, no indexes yet. See dump_file.sql for why psql runs it.
\ir dump_file.sql
\set batch_error `bin=$(dirname "$(readlink /proc/$PPID/exe)"); out=$("$bin/pg_restore" --no-owner --exit-on-error --dbname="$PGDATABASE" "$BATCH_DUMP" 2>&1) || echo "failed: $out" | head -n 1`
select pg_temp.fail('pg_restore ' || :'batch_error') where :'batch_error' <> '';
