-- The article's load, with :users instead of its 20,000,000 (`--scale 20`
-- reproduces it): one generate_series insert per table, primary keys added
-- after the load, then statistics and a vacuum ("vacuum before test").
insert into user_info (userid,engname,cnname,occupation,birthday,signname,email,qq,crt_time,mod_time)
select generate_series(1,:users),  'digoal.zhou',  '德哥',  'DBA',  '1970-01-01' ,E'公益是一辈子的事, I\'m Digoal.Zhou, Just do it!',  'digoal@126.com',  276732431, clock_timestamp(),  NULL;

insert into user_session (userid) select generate_series(1,:users);

set work_mem='2048MB';
set maintenance_work_mem='2048MB';
alter table user_info add constraint pk_user_info primary key (userid);
alter table user_session add constraint pk_user_session primary key (userid);
reset work_mem;
reset maintenance_work_mem;

vacuum analyze user_info, user_session, user_login_rec, user_logout_rec;
