\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null '(null)'
-- Correlated subqueries that stay subqueries (in the select list, under
-- OR, NOT IN, nested ones reading a query further out): lockd runs one
-- again only when the values it reads of the rows around it changed, so
-- each of these must read exactly what it depends on.
create table o (id int, k int, n numeric, s text);
insert into o values (1, 1, 1.0, 'a'), (2, 1, 1.00, 'a'), (3, 2, 2, 'b'), (4, 2, 2, 'c'), (5, null, null, 'c'), (6, null, 1, null), (7, 3, -0.0, 'c');
create table i (k int, w int, s text);
insert into i values (1, 10, 'a'), (1, 11, 'b'), (2, 20, 'c'), (null, 30, 'a'), (3, 40, null);
-- repeated outer values, in and out of order
select id, (select max(w) from i where i.k = o.k) from o order by id;
select id, (select max(w) from i where i.k = o.k) from o order by k, id;
select id, (select count(*) from i where i.k = o.k and i.s = o.s) from o order by s, id;
select id, (select count(*) from i where i.k is not distinct from o.k) from o order by id;
-- the value itself, where equal values print differently
select id, n, (select o.n) from o order by id;
select id, (select o.n::text) from o order by n, id;
select n, (select array_agg(w order by w) from i where i.k::numeric = o.n) from o order by id;
-- read through a subquery in FROM, a WITH query, a function, LATERAL
select id, (select x from (select o.k + 1 as x) d) from o order by id;
select id, (with c as (select o.k as x) select x from c) from o order by id;
select id, (select sum(g) from generate_series(1, o.k) g) from o order by id;
select id, (select count(*) from i, lateral (select i.w + o.k as y) l where l.y > 20) from o order by id;
select id, (select string_agg(s, ',' order by s) from (select s from i where i.k = o.k) d) from o order by id;
-- nested: reading only the query two levels out, or both
select id, (select count(*) from i where i.w > (select min(w) from i i2 where i2.k = o.k)) from o order by id;
select id, (select count(*) from i where exists (select 1 from i i2 where i2.k = o.k and i2.w = i.w)) from o order by id;
select id, (select count(*) from i where i.k = o.k and i.w > (select min(w) from i i2 where i2.s = i.s)) from o order by id;
select o.id from o where o.k in (select i.k from i where i.w in (select max(i2.w) from i i2 where i2.w > o.id * 5 group by i2.k)) order by id;
select count(*) from o a1 where exists (select 1 from o a2 where a2.k = a1.k and not exists (select 1 from i where i.k = a2.id));
-- under OR, NOT IN, in HAVING and ORDER BY
select id from o where exists (select 1 from i where i.k = o.k and i.s = o.s) or id > 5 order by id;
select id from o where k not in (select k from i where i.s = o.s) order by id;
select k, count(*) from o group by k having exists (select 1 from i where i.k = o.k) order by k;
select id from o order by (select max(w) from i where i.k = o.k) nulls first, id;
-- a volatile function runs each time
select id, (select count(*) from i where i.k = o.k and random() >= 0) from o order by id;
