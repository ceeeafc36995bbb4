-- Ten logins (the article's function) in one transaction: one commit per ten logins.
-- Each login's user is uniform over its own tenth of the users, so a transaction
-- locks its ten user_session rows in ascending userid order, as a real batcher
-- that sorts its keys would: two batches can wait on each other but never deadlock.
\set stripe :users / 10
\set u0 random(1, :stripe)
\set u1 1 * :stripe + random(1, :stripe)
\set u2 2 * :stripe + random(1, :stripe)
\set u3 3 * :stripe + random(1, :stripe)
\set u4 4 * :stripe + random(1, :stripe)
\set u5 5 * :stripe + random(1, :stripe)
\set u6 6 * :stripe + random(1, :stripe)
\set u7 7 * :stripe + random(1, :stripe)
\set u8 8 * :stripe + random(1, :stripe)
\set u9 9 * :stripe + random(1, :stripe)
begin;
SELECT f_user_login(:u0);
SELECT f_user_login(:u1);
SELECT f_user_login(:u2);
SELECT f_user_login(:u3);
SELECT f_user_login(:u4);
SELECT f_user_login(:u5);
SELECT f_user_login(:u6);
SELECT f_user_login(:u7);
SELECT f_user_login(:u8);
SELECT f_user_login(:u9);
commit;
