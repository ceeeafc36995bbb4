\set userid random(1, :users)
select userid,engname,cnname,occupation,birthday,signname,email,qq from user_info where userid=:userid;
insert into user_login_rec (userid,login_time,ip) values (:userid,now(),inet_client_addr());
update user_session_login set logintime=now(),login_count=login_count+1 where userid=:userid;
