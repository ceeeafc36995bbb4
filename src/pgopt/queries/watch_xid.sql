-- The transaction counter as a watch of the source starts, as a row's xmin holds it
-- (32 bits): the rows the source's clients write from here on carry an xmin from it
-- on (source/written.py). Reads the snapshot: no transaction id is taken.
select (txid_snapshot_xmax(txid_current_snapshot()) % 4294967296)::text as xid
