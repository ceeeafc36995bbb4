-- Phase "indexes": the keys, the columns the updates and selects filter and join
-- on, and one index on a 512-character string column (a large sort: this is
-- where maintenance_work_mem shows). Then planner statistics, as a batch script
-- does after a load, so every profile plans the same data the same way.
alter table bt_a add primary key (id);
alter table bt_b add primary key (id);
alter table bt_c add primary key (id);
create index bt_a_grp_val on bt_a (grp, val);
create index bt_a_amount on bt_a (amount);
create index bt_a_str on bt_a (str);
create index bt_b_a_id on bt_b (a_id);
create index bt_b_val on bt_b (val);
create index bt_c_b_id on bt_c (b_id);
create index bt_c_val on bt_c (val);
analyze bt_a, bt_b, bt_c;
