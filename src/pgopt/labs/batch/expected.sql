-- What the update phases must change, counted once on the freshly generated data
-- and kept in the dump, so every restored run is checked against the same numbers.
-- The predicates repeat those of magic_update.sql and string_updates.sql (keep
-- them in step); each reads only columns that no earlier update changes, so the
-- counts on the original data are the counts the updates must report.
create table batch_expected (what text primary key, rows bigint not null);

insert into batch_expected
select 'magic_update bt_a', count(*)
from bt_a
where grp % 4 <> 0 and amount < 800
union all
select 'magic_update bt_b', count(*)
from bt_b b join bt_a a on a.id = b.a_id
where a.grp < 500 and b.val >= 2000
union all
select 'magic_update bt_c', count(*)
from bt_c c join bt_b b on b.id = c.b_id
where c.val < 7000 and b.val % 3 <> 0
union all
select 'string_updates bt_a', count(*) from bt_a where strpos(str, 'a') > 0
union all
select 'string_updates bt_b', count(*) from bt_b where strpos(str, 'a') > 0
union all
select 'string_updates bt_c', count(*) from bt_c where strpos(str, 'a') > 0;
