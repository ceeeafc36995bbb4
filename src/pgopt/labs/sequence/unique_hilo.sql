-- Uniqueness, hi/lo: the 1000 values a client hands out from one nextval (hi .. hi+999),
-- materialised here so that the primary key can prove that blocks never overlap.
insert into seq_values (kind, v, client)
select 'hilo', b.hi + g, :client_id
from (select nextval('u_hilo') as hi) b, generate_series(0, 999) g;
