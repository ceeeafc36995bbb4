-- A column's statistics as text (parameters: schema, table, column): the planner's
-- most common values and histogram, which pgopt ab draws parameters from.
select null_frac::float8 as null_frac,
       most_common_vals::text::text[] as mcv,
       most_common_freqs::float8[] as mcf,
       histogram_bounds::text::text[] as bounds
from pg_stats
where schemaname = %(schema)s and tablename = %(table)s and attname = %(column)s
order by inherited
limit 1
