-- One of 64 sequences (no cache) without building its name: its regclass (an OID)
-- comes from the lookup table seq_pick, one primary-key probe per call.
\set id random(0, 63)
select nextval(nc) from seq_pick where id = :id;
