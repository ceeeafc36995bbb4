-- B's change, applied to B's copy of the data only
create index orders_customer_id on orders (customer_id);
