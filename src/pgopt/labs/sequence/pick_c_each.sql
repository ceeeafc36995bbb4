-- One of 64 sequences (CACHE 100000) without building its name (regclass from seq_pick).
\set id random(0, 63)
select nextval(c) from seq_pick where id = :id;
