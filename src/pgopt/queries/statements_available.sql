-- pg_stat_statements is preloaded, and installable in this database.
select current_setting('shared_preload_libraries') ~ 'pg_stat_statements' as preloaded,
       exists (select 1 from pg_available_extensions where name = 'pg_stat_statements')
           as installable
