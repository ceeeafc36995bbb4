-- Fill the three tables. Multiplying the row number by a large constant modulo a
-- prime scatters the values like random ones, yet identically in every run and
-- on every server. The references from bt_b to bt_a and from bt_c to bt_b come
-- from an md5 of the row number: a random-like mapping, so some rows are
-- referenced several times and about a third not at all. The strings are six sha512 digests of the row number in
-- base64: 512 random-looking characters of 64 kinds, with 8 letters 'a' in an
-- average string and none in about 1 string of 3,000 (the string update skips those).
create function pg_temp.random_string(seed bigint, salt text) returns text
language sql immutable
as $$
  select replace(encode(
      sha512(convert_to(seed || salt || '1', 'UTF8'))
   || sha512(convert_to(seed || salt || '2', 'UTF8'))
   || sha512(convert_to(seed || salt || '3', 'UTF8'))
   || sha512(convert_to(seed || salt || '4', 'UTF8'))
   || sha512(convert_to(seed || salt || '5', 'UTF8'))
   || sha512(convert_to(seed || salt || '6', 'UTF8')), 'base64'), E'\n', '')
$$;

create function pg_temp.pick(seed bigint, salt text, n bigint) returns bigint
language sql immutable
as $$ select 1 + ('x' || left(md5(seed || salt), 15))::bit(60)::bigint % n $$;

insert into bt_a
select i,
       (i * 7919) % 1000,
       (i * 104729) % 10007,
       1 + (i * 31) % 97,
       ((i * 15485863) % 100000) / 100.0,
       pg_temp.random_string(i, 'a')
from generate_series(1, :rows::bigint) i;

insert into bt_b
select i,
       pg_temp.pick(i, 'ab', :rows),
       (i * 69621) % 10007,
       1 + (i * 37) % 97,
       ((i * 32452843) % 100000) / 100.0,
       pg_temp.random_string(i, 'b')
from generate_series(1, :rows::bigint) i;

insert into bt_c
select i,
       pg_temp.pick(i, 'bc', :rows),
       (i * 282475249) % 10007,
       1 + (i * 41) % 97,
       ((i * 49979687) % 100000) / 100.0,
       pg_temp.random_string(i, 'c')
from generate_series(1, :rows::bigint) i;
