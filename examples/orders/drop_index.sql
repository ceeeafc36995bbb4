-- a pull request that drops the index the hot query needs
drop index orders_customer_id;
