-- Uniqueness, no cache: one value from u_nc and one from the merged 64
-- sequences u_nc_0..63 (INCREMENT 64, staggered starts), stored under a primary key.
\set id random(0, 63)
insert into seq_values (kind, v, client)
values ('nocache', nextval('u_nc'), :client_id), ('nocache_64', nextval('u_nc_' || :id), :client_id);
