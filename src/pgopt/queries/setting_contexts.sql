-- Every setting the server knows and what it takes to change it.
select name, context from pg_settings
