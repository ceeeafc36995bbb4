-- Phase "magic_select": typical comparison queries over the three tables: a range
-- read through an index, joins that build large hash tables, full sorts, a
-- grouping with many groups, string comparisons, an anti-join and a top-N.
-- Hash tables and sorts this size spill to temporary files when work_mem is
-- small. Each query stores its answer (or a digest of its rows) in batch_result:
-- a check compares them across profiles. Sums are over integers and numerics
-- only, so they do not depend on the plan or the order of the rows.

insert into batch_result
select 'q1 range of groups and values in bt_a',
       concat_ws(' ', count(*), sum(amount), min(id), max(id))
from bt_a
where grp between 100 and 199 and val < 5000;

insert into batch_result
select 'q2 bt_b per bt_a group',
       md5(string_agg(concat_ws(':', grp, n, total), ',' order by grp))
from (select a.grp, count(*) as n, sum(b.amount) as total
      from bt_a a join bt_b b on b.a_id = a.id
      where b.val < 5000
      group by a.grp) g;

insert into batch_result
select 'q3 bt_c against its bt_b and bt_a rows',
       concat_ws(' ', count(*), sum(c.amount - b.amount), sum(c.qty + a.qty))
from bt_c c
join bt_b b on b.id = c.b_id
join bt_a a on a.id = b.a_id
where c.val > a.val and c.amount < b.amount;

insert into batch_result
select 'q4 bt_b ranked by amount',
       sum(rn * (val % 100))::text
from (select val, row_number() over (order by amount desc, id) as rn from bt_b) r;

insert into batch_result
select 'q5 bt_c grouped by its bt_b row',
       concat_ws(' ', count(*), sum(n), max(n), sum(q))
from (select b_id, count(*) as n, sum(qty) as q from bt_c group by b_id) g;

insert into batch_result
select 'q6 bt_c sorted by string',
       md5(string_agg(id::text, ',' order by str, id))
from bt_c
where val < 2000;

insert into batch_result
select 'q7 string comparisons',
       concat_ws(' ',
         (select count(*) from bt_a where str like 'Zz%'),
         (select count(*) from bt_b where str > 'w' and amount > 500),
         (select count(*) from bt_c where str like '%xyz%'));

insert into batch_result
select 'q8 bt_a rows that no bt_b row refers to',
       count(*)::text
from bt_a a
where not exists (select from bt_b b where b.a_id = a.id);

insert into batch_result
select 'q9 top 100 bt_c rows by qty * amount',
       md5(string_agg(id::text, ',' order by w desc, id))
from (select id, qty * amount as w from bt_c order by w desc, id limit 100) t;
