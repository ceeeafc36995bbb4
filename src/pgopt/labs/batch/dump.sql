-- Setup, last: dump the generated tables once with pg_dump -Fc (see dump_file.sql).
\ir dump_file.sql
\set batch_error `bin=$(dirname "$(readlink /proc/$PPID/exe)"); out=$("$bin/pg_dump" --format=custom --file="$BATCH_DUMP" 2>&1) || echo "failed: $out" | head -n 1`
select pg_temp.fail('pg_dump ' || :'batch_error') where :'batch_error' <> '';
