-- user_login_rec partitioned by login time: one partition a day from yesterday to
-- the day after tomorrow, and a default one. Every login of a run lands in today's.
-- Works from any earlier form of the table (plain or partitioned): the rows move.
alter table user_login_rec rename to user_login_rec_before;
create table user_login_rec (userid int, login_time timestamp without time zone, ip inet)
  partition by range (login_time);
select format('create table user_login_rec_d%s partition of user_login_rec for values from (%L) to (%L)',
              to_char(d, 'YYYYMMDD'), d::date, (d + interval '1 day')::date)
from generate_series(current_date - 1, current_date + 2, interval '1 day') d
\gexec
create table user_login_rec_dx partition of user_login_rec default;
insert into user_login_rec select * from user_login_rec_before;
drop table user_login_rec_before;
vacuum analyze user_login_rec;

\ir planning_ms.sql
