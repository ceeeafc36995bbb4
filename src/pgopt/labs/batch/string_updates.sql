-- Phase "string_updates": replace every letter 'a' by 'b' in the 512-character
-- strings of all three tables; nearly every row has one, so nearly every row
-- gets a new version (and new entries in every index of its table).
update bt_a set str = replace(str, 'a', 'b') where strpos(str, 'a') > 0;
insert into batch_log values ('string_updates bt_a', :ROW_COUNT);

update bt_b set str = replace(str, 'a', 'b') where strpos(str, 'a') > 0;
insert into batch_log values ('string_updates bt_b', :ROW_COUNT);

update bt_c set str = replace(str, 'a', 'b') where strpos(str, 'a') > 0;
insert into batch_log values ('string_updates bt_c', :ROW_COUNT);
