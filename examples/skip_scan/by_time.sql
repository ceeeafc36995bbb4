\set t random(1, 400000)
select value from readings where taken = :t;
