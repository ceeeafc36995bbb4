-- Settings that differ from the built-in defaults, for a report's environment.
select name, current_setting(name) as value
from pg_settings
where source not in ('default', 'override', 'client', 'session')
order by name
