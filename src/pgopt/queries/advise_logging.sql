-- Statement logging as this session sees it (the database's and role's own settings
-- included). pgopt advise.
select current_setting('log_statement') as log_statement,
       current_setting('log_min_duration_statement') as log_min_duration_statement
