-- user_session split into its login half and its logout half, each with its own
-- primary key, so that a login and a logout never update the same row. A view
-- under the old name keeps the lab's checks reading one session row per user.
create table user_session_login as select userid, logintime, login_count from user_session;
create table user_session_logout as select userid, logouttime, online_interval from user_session;
alter table user_session_login add primary key (userid);
alter table user_session_logout add primary key (userid);
drop table user_session;
create view user_session as
  select userid, l.logintime, l.login_count, o.logouttime, o.online_interval
  from user_session_login l join user_session_logout o using (userid);
vacuum analyze user_session_login, user_session_logout;
