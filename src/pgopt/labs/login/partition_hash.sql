-- user_login_rec hash-partitioned by user into :partitions partitions, so that
-- concurrent logins insert into different tables. Works from any earlier form of
-- the table (plain or partitioned): the rows move.
alter table user_login_rec rename to user_login_rec_before;
create table user_login_rec (userid int, login_time timestamp without time zone, ip inet)
  partition by hash (userid);
select format('create table user_login_rec_h%s_%s partition of user_login_rec for values with (modulus %s, remainder %s)',
              :partitions, r, :partitions, r)
from generate_series(0, :partitions - 1) r
\gexec
insert into user_login_rec select * from user_login_rec_before;
drop table user_login_rec_before;
vacuum analyze user_login_rec;

\ir planning_ms.sql
