-- the data: 200,000 orders of 20,000 customers (your migrations and seed data)
create table orders (id bigint generated always as identity primary key,
                     customer_id int not null, amount numeric(10,2) not null,
                     created_at timestamptz not null default now());
insert into orders (customer_id, amount)
select (random() * 20000)::int, round((random() * 100)::numeric, 2)
from generate_series(1, 200000);
