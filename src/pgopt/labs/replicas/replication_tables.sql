-- The replication probes' tables (src/pgopt/probes/replication.py): a counter row
-- written on the primary and read at once on the standby, and rows the primary
-- updates and VACUUMs while the standby's readers hold snapshots of them.
drop table if exists read_your_writes, churn;
create table read_your_writes (id int primary key, v bigint not null);
insert into read_your_writes values (1, 0);
create table churn (id int primary key, v bigint not null);
insert into churn select i, 0 from generate_series(1, 10000) i;
vacuum analyze read_your_writes, churn;
