-- planning_ms(query): how long the planner takes over `query`, in milliseconds, on
-- the second of two EXPLAINs (the first also loads the partitions' catalog entries
-- into this session's caches). For the partition steps' facts.
create or replace function planning_ms(query text) returns numeric language plpgsql as $$
declare
  plan json;
begin
  execute 'explain (summary, format json) ' || query into plan;
  execute 'explain (summary, format json) ' || query into plan;
  return round((plan -> 0 ->> 'Planning Time')::numeric, 3);
end
$$;
