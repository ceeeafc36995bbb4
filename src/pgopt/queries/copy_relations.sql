-- What a copy of some relations must hold (parameter: names, as to_regclass reads
-- them): each one, and, until nothing is added, what PostgreSQL needs beside it: a
-- partition's (or inheritance child's) parent and a parent's partitions, the
-- relations a view or materialized view reads, the table a foreign key references,
-- the sequence a column default draws from. Per relation: its name (each part as quote_ident writes it),
-- its kind, whether this role may read it, the extension it belongs to, and what
-- it cannot be created without (its parent, what it reads or references); and the
-- names asked that resolve to it.
with recursive needs(relid, needed, required) as (
    select inhrelid, inhparent, true from pg_inherits
    union all
    select inhparent, inhrelid, false from pg_inherits
    union all
    select r.ev_class, d.refobjid, true
    from pg_rewrite r
    join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = r.oid
                    and d.refclassid = 'pg_class'::regclass and d.refobjid <> r.ev_class
    union all
    select conrelid, confrelid, true from pg_constraint where contype = 'f'
    union all
    select ad.adrelid, d.refobjid, true
    from pg_attrdef ad
    join pg_depend d on d.classid = 'pg_attrdef'::regclass and d.objid = ad.oid
                    and d.refclassid = 'pg_class'::regclass
),
user_needs as (
    select e.* from needs e
    join pg_class c on c.oid = e.needed
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')
),
wanted(relid) as (
    select distinct to_regclass(name)::oid from unnest(%(names)s::text[]) name
    where to_regclass(name) is not null
    union
    select e.needed from wanted w join user_needs e on e.relid = w.relid
)
select format('%%I.%%I', n.nspname, c.relname) as name, c.relkind::text as kind,
       has_table_privilege(c.oid, 'SELECT') as readable,
       (select x.extname from pg_depend d join pg_extension x on x.oid = d.refobjid
        where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e'
        limit 1) as extension,
       array(select distinct format('%%I.%%I', nn.nspname, cn.relname)
             from user_needs e
             join pg_class cn on cn.oid = e.needed
             join pg_namespace nn on nn.oid = cn.relnamespace
             where e.relid = c.oid and e.required) as needs,
       array(select name from unnest(%(names)s::text[]) name
             where to_regclass(name) = c.oid) as asked
from wanted w
join pg_class c on c.oid = w.relid
join pg_namespace n on n.oid = c.relnamespace
where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')
order by 1
