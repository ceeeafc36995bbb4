-- Phase "magic_update": updates chosen by conditions on numeric columns, each
-- touching 40 to 60% of a table, and each logging the rows it changed (psql
-- sets :ROW_COUNT after every statement). The predicates match expected.sql.

-- bt_a alone: 3 groups in 4 and amounts under 800 (about 60% of the rows)
update bt_a
set amount = amount * 1.05 + 1,
    val = (val + 1) % 10007
where grp % 4 <> 0 and amount < 800;
insert into batch_log values ('magic_update bt_a', :ROW_COUNT);

-- bt_b through its bt_a row: the first 500 groups, val from 2000 (about 40%)
update bt_b b
set amount = b.amount + a.qty,
    qty = b.qty + 1
from bt_a a
where a.id = b.a_id and a.grp < 500 and b.val >= 2000;
insert into batch_log values ('magic_update bt_b', :ROW_COUNT);

-- bt_c through a temporary table of targets (temp_buffers): about 47%
create temp table c_target as
select c.id, b.val % 10 + 1 as bump
from bt_c c join bt_b b on b.id = c.b_id
where c.val < 7000 and b.val % 3 <> 0;
analyze c_target;
update bt_c c
set qty = c.qty + t.bump,
    amount = c.amount + t.bump
from c_target t
where t.id = c.id;
insert into batch_log values ('magic_update bt_c', :ROW_COUNT);
drop table c_target;
