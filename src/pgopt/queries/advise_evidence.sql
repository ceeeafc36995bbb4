-- What the evidence is worth (pgopt advise): how old the statistics are, how long the
-- server has run, whether pg_stats shows this role anything (and, where it shows
-- nothing, whether there was anything to show: tables, rows), tables never analyzed,
-- and which extensions it can read through.
select extract(epoch from now() - coalesce(
           (select stats_reset from pg_stat_database where datname = current_database()),
           pg_postmaster_start_time()))::float8 as stats_age_s,
       extract(epoch from now() - pg_postmaster_start_time())::float8 as uptime_s,
       exists (select 1 from pg_stats where schemaname not in ('pg_catalog', 'information_schema'))
         as stats_visible,
       (select count(*) from pg_stat_user_tables)::int as tables,
       (select count(*) from pg_stat_user_tables t join pg_class c on c.oid = t.relid
         where greatest(t.n_live_tup, c.reltuples) > 0)::int as tables_with_rows,
       array(select format('%%I.%%I', schemaname, relname) from pg_stat_user_tables
             where last_analyze is null and last_autoanalyze is null and n_live_tup > 0
             order by 1) as never_analyzed,
       exists (select 1 from pg_extension where extname = 'pg_stat_statements') as statements,
       exists (select 1 from pg_extension where extname = 'pgstattuple') as pgstattuple,
       current_setting('server_version_num')::int as version_num
