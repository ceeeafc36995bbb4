-- What the role may change the way pgopt changes a user's server's settings
-- (servers/settings.py SettingRights): from PostgreSQL 15 a role may be granted SET or
-- ALTER SYSTEM on a setting, and EXECUTE on the functions that reload the
-- configuration and read postgresql.auto.conf's values (to put them back).
select current_user as role, rolsuper as superuser,
       current_setting('server_version_num')::int as version_num,
       array(select name from pg_settings
             where has_parameter_privilege(name, 'ALTER SYSTEM')) as alter_system,
       array(select name from pg_settings
             where context = 'superuser' and has_parameter_privilege(name, 'SET')) as set_granted,
       has_function_privilege('pg_catalog.pg_reload_conf()', 'execute') as may_reload,
       has_function_privilege('pg_catalog.pg_show_all_file_settings()', 'execute')
         and has_table_privilege('pg_catalog.pg_file_settings', 'select')
         as may_read_file_settings
from pg_roles where rolname = current_user
