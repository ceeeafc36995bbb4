-- The article's advice for no cache and many sessions: one sequence per session
-- (client_id % 64), so no two clients ever want the same sequence.
select nextval(nc) from seq_pick where id = :client_id % 64;
