\set userid random(1, :users)
insert into user_logout_rec (userid,logout_time,ip) values (:userid,now(),inet_client_addr());
update user_session_logout set logouttime=now(),online_interval=online_interval+(now()-(select logintime from user_session_login where userid=:userid)) where userid=:userid;
