-- Seed 002: three tables of numbers and random 512-character strings, :rows rows
-- each (scale 1: 1,000,000 rows, about 600 MB per table). No indexes: building
-- them is a timed phase. Every value is arithmetic on the row number, so every
-- run of the lab, on any server, holds the same data and gets the same answers.
drop table if exists bt_a, bt_b, bt_c, batch_expected;

create table bt_a (
  id     bigint not null,
  grp    int not null,            -- 0..999
  val    int not null,            -- 0..10006
  qty    int not null,            -- 1..97
  amount numeric(12,2) not null,  -- 0.00..999.99
  str    varchar(512) not null    -- 512 letters a..p
);

create table bt_b (
  id     bigint not null,
  a_id   bigint not null,         -- a row of bt_a (some have several, some none)
  val    int not null,
  qty    int not null,
  amount numeric(12,2) not null,
  str    varchar(512) not null
);

create table bt_c (
  id     bigint not null,
  b_id   bigint not null,         -- a row of bt_b
  val    int not null,
  qty    int not null,
  amount numeric(12,2) not null,
  str    varchar(512) not null
);
