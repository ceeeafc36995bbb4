-- What the role may change the way pgopt changes a user's server's settings
-- (servers/settings.py SettingRights): before PostgreSQL 15, a superuser alone sets a
-- superuser-context or a server-wide setting.
select current_user as role, rolsuper as superuser,
       current_setting('server_version_num')::int as version_num,
       '{}'::text[] as alter_system, '{}'::text[] as set_granted, rolsuper as may_reload,
       rolsuper as may_read_file_settings
from pg_roles where rolname = current_user
