-- The tables `pgbench -i -s :scale_factor` creates, built in SQL so that
-- pgopt loads every lab the same way (through psql).
drop table if exists pgbench_history, pgbench_tellers, pgbench_accounts, pgbench_branches;

create table pgbench_branches (bid int not null, bbalance int, filler char(88))
  with (fillfactor = 100);
create table pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84))
  with (fillfactor = 100);
create table pgbench_accounts (aid int not null, bid int, abalance int, filler char(84))
  with (fillfactor = 100);
create table pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp,
  filler char(22));

insert into pgbench_branches (bid, bbalance)
  select b, 0 from generate_series(1, :scale_factor) b;
insert into pgbench_tellers (tid, bid, tbalance)
  select t, (t - 1) / 10 + 1, 0 from generate_series(1, 10 * :scale_factor) t;
insert into pgbench_accounts (aid, bid, abalance, filler)
  select a, (a - 1) / 100000 + 1, 0, '' from generate_series(1, 100000 * :scale_factor) a;

alter table pgbench_branches add primary key (bid);
alter table pgbench_tellers add primary key (tid);
alter table pgbench_accounts add primary key (aid);
vacuum analyze pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history;
