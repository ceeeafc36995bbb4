-- Vacuum sets hint bits and the visibility map (index-only scans need it) and
-- freezes, so the read-only runs write nothing; ANALYZE fills pg_stats (correlation).
vacuum (freeze, analyze) test, test_clustered, test_covering, test_brin, test_array,
  test_jsonb, test_ff100, test_ff80;
-- A checkpoint now rather than inside the first timed run (needs superuser or
-- pg_checkpoint; on a server where we have neither, the runs may see one).
do $$
begin
  execute 'checkpoint';
exception when insufficient_privilege then
  raise notice 'no privilege to checkpoint; skipped';
end $$;
