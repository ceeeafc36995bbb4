-- Where the ingest probes write login records: the article's user_login_rec with
-- the record's number (seq), so that the check can prove each row is the one
-- generated for it. No index, as in the article.
drop table if exists login_ingest;

create table login_ingest (seq bigint, userid int, login_time timestamp without time zone, ip inet);
