-- Hi/lo: one nextval reserves a block of 1000 values (INCREMENT BY 1000); the client
-- hands out hi .. hi+999 itself, so the metric counts 1000 values per call.
select nextval('seq_hilo');
