-- Uniqueness, CACHE 100000: every session draws from its own cached block; the values
-- stored under a primary key prove the blocks never overlap across clients.
\set id random(0, 63)
insert into seq_values (kind, v, client)
values ('cache', nextval('u_c'), :client_id), ('cache_64', nextval('u_c_' || :id), :client_id);
